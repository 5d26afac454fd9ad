// RateLimiter's async acquires: the blocking acquire's
// RateLimiterStep on the shared AcquireOp, without the blocking wait (the
// sleep is the op's timer on the I/O thread).
#include "distlock/rate_limiter_async.hpp"

#include "distlock/error.hpp"
#include "sync/arguments.hpp"
#include "sync/async_wait.hpp"
#include "sync/rate_limiter_step.hpp"

namespace distlock::detail {

std::shared_ptr<AsyncAcquire> async_rate_limiter_acquire_impl(
    const std::shared_ptr<sync::Services>& client,
    const std::shared_ptr<const std::string>& name,
    std::int64_t n,
    std::optional<std::chrono::milliseconds> wait,
    std::unique_ptr<Receiver<bool>> receiver) {
  if (n <= 0 || (wait && wait->count() < 0)) {
    return sync::complete_at_once(std::move(receiver), make_error_code(errc::invalid_argument));
  }
  // One deadline for both: the step gives up at once when the server's wait
  // outlasts the deadline the loop runs to.
  const auto deadline = sync::deadline_after(wait);
  return sync::start_async_step(client, std::make_unique<sync::RateLimiterStep>(name, n, deadline),
                                deadline, std::move(receiver));
}

}  // namespace distlock::detail
