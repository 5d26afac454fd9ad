#include "sync/holding_step.hpp"

#include "runtime/metrics_long_hold.hpp"
#include "runtime/watchdog.hpp"
#include "sync/lock_ops.hpp"

namespace distlock::sync {

HoldingStep::HoldingStep(Services& client,
                         std::shared_ptr<Holding> state,
                         std::uint32_t count_after)
    : client_(client), state_(std::move(state)), count_after_(count_after) {}

void HoldingStep::acquired(const Attempt& attempt, Clock::time_point sent) {
  if (!state_->active.load()) state_->fencing_token = attempt.token;
  if (!state_->active.load())
    runtime::start_hold(client_.metrics, client_.long_holds, state_, metric(), sent);
  state_->confirm(sent);
  state_->active = true;
  client_.watchdog.activated(*state_);
}

void HoldingStep::undo() {
  // Sent until the server answers: a cleanup lost too would leave a hold the
  // owner does not know of.
  cleanup_ = PendingRelease::start(client_, state_, count_after_, false, false);
}

MetricPrimitive HoldingStep::metric() const {
  return state_->primitive->metric();
}

std::chrono::milliseconds HoldingStep::fallback() const {
  return std::chrono::milliseconds(state_->ttl.count() / 3 + 1);
}

}  // namespace distlock::sync
