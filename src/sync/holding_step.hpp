// The part of an acquire step every holding primitive shares: on success
// the holding is confirmed from when the attempt was sent and handed to the
// watchdog; an attempt that got no reply is undone by the primitive's own
// release of the count it would have produced, sent until the server answers.
#pragma once

#include <cstdint>
#include <memory>

#include "sync/acquire_step.hpp"
#include "sync/holding.hpp"

namespace distlock::sync {

class PendingRelease;

class HoldingStep : public AcquireStep {
 public:
  // `count_after`: the owner's hold count if this acquire succeeds.
  HoldingStep(Services& client, std::shared_ptr<Holding> state, std::uint32_t count_after);

  std::string_view route_key() const override { return state_->primitive->route_key(); }
  // A first hold takes the attempt's fencing token (a re-entry keeps its
  // own), is confirmed from `sent`, and starts being renewed.
  void acquired(const Attempt& attempt, Clock::time_point sent) override;
  // Releasing with the count this acquire would have produced removes
  // exactly the holding it made, and nothing when it did not run.
  void undo() override;
  // A holder without TTL is re-checked every third of our lease.
  std::chrono::milliseconds fallback() const override;
  // From the primitive's kind: lock, fair, read, write, simple.
  MetricPrimitive metric() const override;
  std::chrono::nanoseconds validity() const override { return state_->believed; }

  // After the op finished: the undo of an attempt that got no reply, still
  // being settled in the background; otherwise null.
  const std::shared_ptr<PendingRelease>& cleanup() const noexcept { return cleanup_; }

 protected:
  Services& client_;
  const std::shared_ptr<Holding> state_;
  const std::uint32_t count_after_;

 private:
  std::shared_ptr<PendingRelease> cleanup_;
};

}  // namespace distlock::sync
