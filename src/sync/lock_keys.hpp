// The reentrant lock as a Primitive: its keys and channel (Redisson's RLock
// layout), acquire.lua to take it, release.lua to release it.
#pragma once

#include <chrono>
#include <string>

#include "sync/key_layout.hpp"  // its keys' layout, for the users of LockKeys too
#include "sync/primitive.hpp"

namespace distlock::sync {

class LockKeys final : public Primitive {
 public:
  // Validates `name` (non-empty, at most 64 KiB); throws Error(invalid_argument).
  // `lock_delay`: LockOptions::lock_delay, checked (0: none).
  LockKeys(std::string name,
           bool fenced,
           std::chrono::milliseconds lock_delay = std::chrono::milliseconds(0));

  const std::string& name = Primitive::name();  // the lock hash's key
  std::string channel;                          // lock_channel(name)
  std::string fence;                            // fencing_counter_key(name); empty unless fenced
  const LockDelay delay;  // LockOptions::lock_delay: its marker and text, or none

  std::string_view route_key() const override { return name; }
  std::string_view kind() const override { return "lock"; }
  MetricPrimitive metric() const override { return MetricPrimitive::lock; }
  bool fenced() const override { return !fence.empty(); }
  std::unique_ptr<HoldingStep> acquire_step(Services& client,
                                            std::shared_ptr<Holding> state,
                                            std::uint32_t count_after) const override;
  runtime::Renewal renewal(const std::string& owner) const override;
  const script::Script& release_script() const override;
  void release_args(const Holding& state,
                    std::string_view expected,
                    ReleaseArgs& out) const override;

 protected:
  std::string_view unlock_channel() const override { return channel; }
  std::string_view delay_marker() const override { return delay.key; }
};

}  // namespace distlock::sync
