// The fair lock as a Primitive: FIFO across processes with a queue kept by
// the server's clock, and handoff by grant (docs/fair_lock.md). Its holding
// is a reentrant lock hash like Lock's (so Lock's queries work unchanged);
// fair_acquire.lua queues waiters, fair_release.lua grants a freed lock to
// the first live waiter and publishes the grant on that waiter's own channel.
#pragma once

#include <chrono>
#include <string>

#include "sync/key_layout.hpp"
#include "sync/primitive.hpp"

namespace distlock::sync {

class FairPrimitive final : public Primitive {
 public:
  // Validates `name` (non-empty, at most 64 KiB); throws Error(invalid_argument).
  // `lock_delay`: LockOptions::lock_delay, checked (0: none).
  FairPrimitive(std::string name,
                bool fenced,
                std::chrono::milliseconds lock_delay = std::chrono::milliseconds(0));

  const std::string& name = Primitive::name();  // the lock hash's key
  std::string queue;    // redisson_lock_queue:{name}: waiting owners, oldest first
  std::string timeout;  // redisson_lock_timeout:{name}: owner -> liveness deadline (server ms)
  std::string channel_prefix;  // redisson_lock__channel:{name}; a waiter's is <prefix>:<owner>
  std::string fence;           // fencing counter key; empty unless fenced
  const LockDelay delay;       // LockOptions::lock_delay: its marker and text, or none

  std::string_view route_key() const override { return name; }
  std::string_view kind() const override { return "fair"; }
  MetricPrimitive metric() const override { return MetricPrimitive::fair_lock; }
  bool fenced() const override { return !fence.empty(); }
  std::unique_ptr<HoldingStep> acquire_step(Services& client,
                                            std::shared_ptr<Holding> state,
                                            std::uint32_t count_after) const override;
  runtime::Renewal renewal(const std::string& owner) const override;
  const script::Script& release_script() const override;
  void release_args(const Holding& state,
                    std::string_view expected,
                    ReleaseArgs& out) const override;
  // Frees it whoever holds it and grants it to the first live waiter.
  bool force_release(const Services& client, std::error_code& ec, std::string& what) const override;

  // The KEYS of every fair script: the hash, the queue, the zset, with a
  // delay its marker and, when fenced, the counter.
  void keys(ReleaseArgs& out) const;
  // The channel a waiter `owner` hears its grant on.
  std::string waiter_channel(const std::string& owner) const;
};

}  // namespace distlock::sync
