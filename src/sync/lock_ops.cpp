#include "sync/lock_ops.hpp"

#include <string>
#include <vector>

#include "distlock/error.hpp"
#include "net/completion.hpp"
#include "runtime/executor.hpp"
#include "runtime/watchdog.hpp"
#include "sync/blocking_call.hpp"
#include "sync/holding_step.hpp"
#include "topology/topology.hpp"

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
  // Checked before the watchdog sees the state, with the async form named.
  if (!may_block(client, result.ec, result.message,
                 "a blocking lock call on the client's I/O thread would deadlock; use "
                 "async_acquire there")) {
    // An acquire on a closed Client is a failed acquire (misuse on the I/O
    // thread is a programming error, not counted).
    if (result.ec == errc::closed) {
      client.metrics.acquire(step->metric(), AcquireResult::failed, false, Clock::now());
    }
    return result;
  }
  const bool fresh = !state->active.load();
  if (fresh) client.watchdog.add(state);
  HoldingStep& holding_step = *step;
  result = acquire_step_blocking(client, std::move(step), deadline, [&] {
    if (cleanup != nullptr) *cleanup = holding_step.cleanup();
  });
  if (fresh && !result.acquired) client.watchdog.remove(state.get());
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
  const auto result = release_result(reply, ec);
  // A partial unlock re-armed the lease on the server (as Redisson's does).
  if (result == ReleaseResult::decremented) state.confirm(sent);
  return result;
}

void release_detached(std::shared_ptr<Holding> state, std::uint32_t expected) {
  const Primitive& p = *state->primitive;
  const std::string count = std::to_string(expected);
  ReleaseArgs a;
  p.release_args(*state, count, a);
  // Not queued (closing, queue full): the holding's lease settles it.
  (void)state->services->topology.call_detached(
      std::string(p.route_key()), p.release_script(),
      std::vector<std::string>(a.key_span().begin(), a.key_span().end()),
      std::vector<std::string>(a.arg_span().begin(), a.arg_span().end()), {});
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
