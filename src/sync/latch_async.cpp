// Latch's async waits: the blocking wait's LatchStep on the
// shared AcquireOp, without the blocking wait. A wait holds nothing, so
// cancellation only leaves the channel's waiters.
#include "distlock/latch_async.hpp"

#include "distlock/error.hpp"
#include "sync/arguments.hpp"
#include "sync/async_wait.hpp"
#include "sync/latch_step.hpp"

namespace distlock::detail {

std::shared_ptr<AsyncAcquire> async_latch_wait_impl(
    const std::shared_ptr<sync::Services>& client,
    const std::shared_ptr<const sync::LatchNames>& names,
    std::optional<std::chrono::milliseconds> wait,
    std::unique_ptr<Receiver<bool>> receiver) {
  // As the blocking wait_for: a negative wait is a caller's mistake.
  if (wait && wait->count() < 0) {
    return sync::complete_at_once(std::move(receiver), make_error_code(errc::invalid_argument));
  }
  return sync::start_async_step(client, std::make_unique<sync::LatchStep>(names),
                                sync::deadline_after(wait), std::move(receiver));
}

}  // namespace distlock::detail
