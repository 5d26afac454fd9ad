// Semaphore's async acquires: the blocking forms' acquire loop
// without the blocking wait. The Client's permits run on its shared holder
// (SemaphoreState); a Permit's on its own holder, as the blocking forms.
#include "distlock/semaphore_async.hpp"

#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/identity.hpp"
#include "runtime/watchdog.hpp"
#include "sync/arguments.hpp"
#include "sync/async_wait.hpp"
#include "sync/permit_step.hpp"
#include "sync/semaphore_state.hpp"

namespace distlock::detail {
namespace {

using sync::SemaphoreState;

// Bad input, checked before anything is sent (Lock's async forms report
// through the handler too, never by throwing).
std::error_code check(const SemaphoreState& state,
                      std::int64_t n,
                      std::optional<std::chrono::milliseconds> wait,
                      std::optional<std::chrono::milliseconds> lease) {
  if (n <= 0 || (wait && wait->count() < 0) || (lease && lease->count() <= 0)) {
    return make_error_code(errc::invalid_argument);
  }
  if (state.services->executor.closed()) return make_error_code(errc::closed);
  return {};
}

}  // namespace

std::shared_ptr<AsyncAcquire> async_semaphore_acquire_impl(
    const std::shared_ptr<SemaphoreState>& state,
    std::int64_t n,
    std::optional<std::chrono::milliseconds> wait,
    std::unique_ptr<Receiver<bool>> receiver) {
  if (auto ec = check(*state, n, wait, std::nullopt)) {
    return sync::complete_at_once(std::move(receiver), ec);
  }
  auto op =
      state->start_acquire(n, sync::deadline_after(wait),
                           [r = std::shared_ptr<Receiver<bool>>(std::move(receiver))](
                               sync::AcquireOutcome o) { r->complete(o.ec, !o.ec && o.acquired); });
  return sync::cancel_handle(op);
}

std::shared_ptr<AsyncAcquire> async_permit_acquire_impl(
    const std::shared_ptr<SemaphoreState>& state,
    std::int64_t n,
    std::optional<std::chrono::milliseconds> wait,
    std::optional<std::chrono::milliseconds> lease,
    std::unique_ptr<Receiver<Permit>> receiver) {
  if (auto ec = check(*state, n, wait, lease)) {
    return sync::complete_at_once(std::move(receiver), ec);
  }
  sync::Services& client = *state->services;
  auto holding = std::make_shared<sync::Holding>(state->services, state->permits,
                                                 runtime::random_token(), lease);
  client.watchdog.add(holding);
  // The Permit's holder is its own: an unanswered or cancelled attempt is
  // undone by retiring it, whenever its reply comes.
  auto op = std::make_shared<sync::AcquireOp>(
      client, std::make_unique<sync::PermitStep>(client, *state->permits, holding, n),
      sync::deadline_after(wait),
      [holding, n,
       r = std::shared_ptr<Receiver<Permit>>(std::move(receiver))](sync::AcquireOutcome o) {
        if (o.acquired && !o.ec) return r->complete({}, Permit(holding, n));
        holding->services->watchdog.remove(holding.get());
        r->complete(o.ec, Permit());
      });
  op->start();
  return sync::cancel_handle(op);
}

asio::any_io_executor semaphore_executor(const SemaphoreState& state) {
  return client_executor(*state.services);
}

}  // namespace distlock::detail
