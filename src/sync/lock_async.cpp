#include "distlock/lock_async.hpp"

#include <asio/post.hpp>
#include <asio/system_executor.hpp>

#include "backend/lock_engine.hpp"
#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/identity.hpp"
#include "runtime/watchdog.hpp"
#include "sync/acquire_op.hpp"
#include "sync/arguments.hpp"
#include "sync/async_wait.hpp"
#include "sync/holding_step.hpp"
#include "sync/lock_ops.hpp"
#include "sync/services.hpp"

namespace distlock::detail {
namespace {

// Waits for one release script call and hands its outcome to the receiver;
// an unknown outcome goes on in the background as a PendingRelease.
class AsyncReleaseCall final : public net::Completion {
 public:
  AsyncReleaseCall(std::shared_ptr<sync::Holding> state,
                   bool valid_before,
                   std::unique_ptr<Receiver<std::error_code>> receiver)
      : state_(std::move(state)),
        valid_before_(valid_before),
        receiver_(std::move(receiver)),
        call_(*state_, 1, this) {}

  std::error_code start() { return call_.start(state_->services->topology); }

  void complete(std::error_code ec, Value reply) override {
    sync::ReleaseResult result = sync::ReleaseResult::not_held;
    if (!ec) result = sync::release_result(reply, ec);
    std::error_code reported = ec;
    if (ec == errc::timeout || ec == errc::connection_lost) {
      // Never wait on the I/O thread: the repeat goes on in the background.
      sync::PendingRelease::start(*state_->services, state_, 1, true, valid_before_);
    } else {
      reported =
          sync::finish_release(*state_->services, state_, 1, valid_before_, result, ec, nullptr);
    }
    auto receiver = std::move(receiver_);
    // Freed once the call that completes now has unwound.
    asio::post(state_->services->executor.io(),
               [self = std::unique_ptr<AsyncReleaseCall>(this)] {});
    receiver->complete(reported, {});
  }

  std::unique_ptr<Receiver<std::error_code>> take_receiver() { return std::move(receiver_); }

 private:
  std::shared_ptr<sync::Holding> state_;
  bool valid_before_;
  std::unique_ptr<Receiver<std::error_code>> receiver_;
  sync::ReleaseCall call_;
};

}  // namespace

std::shared_ptr<AsyncAcquire> async_acquire_impl(const Lock& lock,
                                                 std::optional<std::chrono::milliseconds> wait,
                                                 std::unique_ptr<Receiver<Lease>> receiver) {
  if (wait && wait->count() < 0) {
    // As the blocking forms: a negative wait is a caller's mistake, not "try
    // once". Completed off this call, like every failure to start.
    return sync::complete_at_once(std::move(receiver), make_error_code(errc::invalid_argument));
  }
  if (const auto& engine = detail::Access::engine(lock)) {
    return engine->async_acquire(wait, std::move(receiver));
  }
  const auto& client = detail::Access::services(lock);
  const auto& primitive = detail::Access::primitive(lock);
  auto state = std::make_shared<sync::Holding>(
      client, primitive, primitive->owner_for(client->client_id + ":" + runtime::random_token()),
      std::nullopt);
  client->watchdog.add(state);
  const std::optional<sync::Clock::time_point> deadline = sync::deadline_after(wait);
  auto op = std::make_shared<sync::AcquireOp>(
      *client, primitive->acquire_step(*client, state, 1), deadline,
      [state, r = std::shared_ptr<Receiver<Lease>>(std::move(receiver))](sync::AcquireOutcome o) {
        if (o.acquired) return r->complete({}, detail::Access::lease(state));
        state->services->watchdog.remove(state.get());
        // Not acquired in time is no error: an empty Lease.
        r->complete(o.ec, Lease());
      });
  op->start();
  return sync::cancel_handle(op);
}

void async_release_impl(Lease& lease, std::unique_ptr<Receiver<std::error_code>> receiver) {
  if (auto foreign = detail::Access::take_state(lease); foreign && foreign->foreign()) {
    foreign->release_foreign_async([r = std::shared_ptr<Receiver<std::error_code>>(std::move(
                                        receiver))](std::error_code ec) { r->complete(ec, {}); });
    return;
  } else {
    lease = detail::Access::lease(std::move(foreign));
  }
  std::shared_ptr<sync::Holding> state = sync::holding(detail::Access::take_state(lease));
  const bool valid_before = state && state->valid();
  // Nothing to release (no lease, or released already): done, off this call.
  if (!state || state->released.exchange(true)) {
    sync::complete_at_once(std::move(receiver), {});
    return;
  }
  sync::Services& client = *state->services;
  client.watchdog.remove(state.get());
  if (client.executor.closed()) {
    sync::complete_at_once(std::move(receiver), errc::closed);
    return;
  }
  auto call = std::make_unique<AsyncReleaseCall>(state, valid_before, std::move(receiver));
  if (auto ec = call->start()) {
    // Not queued: it never ran. Keep trying in the background (a full queue
    // drains); the caller learns it was not confirmed.
    if (ec != errc::closed) sync::PendingRelease::start(client, state, 1, true, valid_before);
    sync::complete_at_once(call->take_receiver(), ec);
    return;
  }
  call.release();  // owned by its completion from here on
}

asio::any_io_executor lock_executor(const Lock& lock) {
  if (const auto& engine = detail::Access::engine(lock)) return engine->executor();
  return client_executor(*detail::Access::services(lock));
}

asio::any_io_executor lease_executor(const Lease& lease) {
  if (const auto* s = detail::Access::state(lease); s && s->foreign()) {
    return s->foreign_executor();
  }
  auto services = detail::Access::services(lease);
  if (!services) return asio::system_executor();
  return client_executor(*services);
}

}  // namespace distlock::detail
