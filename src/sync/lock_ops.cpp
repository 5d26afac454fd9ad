#include "sync/lock_ops.hpp"

#include <asio/post.hpp>

#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/watchdog.hpp"
#include "sync/acquire_op.hpp"
#include "sync/holding_step.hpp"

namespace distlock::sync {

AcquireOutcome acquire_blocking(Services& client,
                                const std::shared_ptr<Holding>& state,
                                std::uint32_t count_after,
                                std::optional<Clock::time_point> deadline,
                                std::shared_ptr<PendingRelease>* cleanup) {
  return acquire_blocking(client, state, state->primitive->acquire_step(client, state, count_after),
                          deadline, cleanup);
}

AcquireOutcome acquire_blocking(Services& client,
                                const std::shared_ptr<Holding>& state,
                                std::unique_ptr<HoldingStep> step,
                                std::optional<Clock::time_point> deadline,
                                std::shared_ptr<PendingRelease>* cleanup) {
  AcquireOutcome result;
  if (!client.executor.may_block(result.ec)) {
    result.message = result.ec == errc::closed ? "the client is closed"
                                               : "a blocking lock call on the client's I/O thread "
                                                 "would deadlock; use async_acquire there";
    return result;
  }
  const bool fresh = !state->active.load();
  if (fresh) client.watchdog.add(state);
  net::Event done;
  HoldingStep& holding_step = *step;
  auto op =
      std::make_shared<AcquireOp>(client, std::move(step), deadline, [&](AcquireOutcome outcome) {
        result = std::move(outcome);
        done.set();
      });
  op->start();
  done.wait();
  if (fresh && !result.acquired) client.watchdog.remove(state.get());
  if (cleanup != nullptr) *cleanup = holding_step.cleanup();
  return result;
}

ReleaseResult release_blocking(Services& client,
                               Holding& state,
                               std::uint32_t expected,
                               std::error_code& ec) {
  ec.clear();
  if (!client.executor.may_block(ec)) return ReleaseResult::not_held;
  net::SyncCompletion done;
  ReleaseCall call(state, expected, &done);
  const auto sent = Clock::now();
  if ((ec = call.start(client.topology))) {
    return ReleaseResult::not_held;
  }
  Value reply = done.wait(ec);
  if (ec) return ReleaseResult::not_held;
  const auto result = release_result(state.primitive->release_reply(std::move(reply)), ec);
  // A partial unlock re-armed the lease on the server (as Redisson's does).
  if (result == ReleaseResult::decremented) state.confirm(sent);
  return result;
}

namespace {

// A release nobody waits for: owns its holding until the reply, then itself.
class DetachedRelease final : public net::Completion {
 public:
  DetachedRelease(std::shared_ptr<Holding> state, std::uint32_t expected)
      : state_(std::move(state)), call_(*state_, expected, this) {}
  void start() {
    // Not queued (closing, queue full): the holding's lease settles it.
    if (call_.start(state_->services->topology)) delete this;
  }
  void complete(std::error_code, Value) override {
    // The call completing now is a member: let it unwind first.
    asio::post(state_->services->executor.io(), [self = std::unique_ptr<DetachedRelease>(this)] {});
  }

 private:
  const std::shared_ptr<Holding> state_;
  ReleaseCall call_;
};

}  // namespace

void release_detached(std::shared_ptr<Holding> state, std::uint32_t expected) {
  (new DetachedRelease(std::move(state), expected))->start();
}

std::error_code finish_release(Services& client,
                               const std::shared_ptr<Holding>& state,
                               std::uint32_t expected,
                               bool valid_before,
                               ReleaseResult result,
                               std::error_code ec,
                               std::shared_ptr<PendingRelease>* pending) {
  if (!ec) {
    // The first attempt: a count mismatch cannot be a repeat of this call.
    if (result == ReleaseResult::not_held || result == ReleaseResult::mismatch) {
      return errc::lease_lost;
    }
    return {};
  }
  if (ec != errc::timeout && ec != errc::connection_lost) return ec;
  auto p = PendingRelease::start(client, state, expected, true, valid_before);
  if (ec == errc::connection_lost) {
    // The connection is back at once in most drops: give the repeat the time
    // one command may take before leaving it to the background.
    if (auto o = p->wait_until(Clock::now() + client.options.command_timeout)) {
      return p->reported(*o);
    }
  }
  if (pending != nullptr) *pending = std::move(p);
  return ec;
}

}  // namespace distlock::sync
