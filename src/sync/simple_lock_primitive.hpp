// The canonical SET NX lock as a Primitive: the key is the name, its value a
// fresh random token per acquisition (SET NX PX), released by
// compare-and-delete and renewed by compare-and-pexpire — the layout node
// redlock, redsync and redis-py's Lock use, so each excludes the others.
#pragma once

#include <chrono>
#include <string>

#include "sync/holding_step.hpp"
#include "sync/key_layout.hpp"
#include "sync/primitive.hpp"

namespace distlock::sync {

class SimplePrimitive : public Primitive {
 public:
  // Validates `name` (non-empty, at most 64 KiB); throws Error(invalid_argument).
  // `poll_cap`: the longest a waiter sleeps between attempts without a
  // wake-up (peers release without publishing).
  // `lock_delay`: LockOptions::lock_delay, checked (0: none, as Redlock's).
  SimplePrimitive(std::string name,
                  bool fenced,
                  std::chrono::milliseconds poll_cap,
                  std::chrono::milliseconds lock_delay);

  std::string channel;    // distlock_simple_lock__channel:{name} (:name when it has a '{')
  std::string fence;      // fencing counter key; empty unless fenced
  const LockDelay delay;  // LockOptions::lock_delay: its marker and text, or none
  const std::chrono::milliseconds poll_cap;

  std::string_view route_key() const override { return name(); }
  std::string_view kind() const override { return "simple"; }
  MetricPrimitive metric() const override { return MetricPrimitive::simple_lock; }
  bool reentrant() const override { return false; }
  bool fenced() const override { return !fence.empty(); }
  // Ignores `base`: the owner on the server is the key's value, a fresh
  // 128-bit token from the CSPRNG for every acquisition.
  std::string owner_for(std::string base) const override;
  std::unique_ptr<HoldingStep> acquire_step(Services& client,
                                            std::shared_ptr<Holding> state,
                                            std::uint32_t count_after) const override;
  runtime::Renewal renewal(const std::string& owner) const override;
  const script::Script& release_script() const override;
  void release_args(const Holding& state,
                    std::string_view expected,
                    ReleaseArgs& out) const override;
  // 1 when the calling thread holds it (its local holding's token is the
  // key's value), else 0. `owner` (the thread's owner id) is not on the
  // server and is ignored.
  std::uint32_t query_count(const Services& client,
                            const std::string& owner,
                            std::error_code& ec,
                            std::string& what) const override;

 protected:
  std::string_view unlock_channel() const override { return channel; }
  std::string_view delay_marker() const override { return delay.key; }
};

// simple_acquire.lua on the key (and the fencing counter). A contended reply
// is the holder's PTTL, capped at the primitive's poll cap: a peer's release
// publishes nothing, so the waiter must look again by itself.
class SimpleStep : public HoldingStep {
 public:
  SimpleStep(Services& client, const SimplePrimitive& lock, std::shared_ptr<Holding> state);

  const script::Script& script() const override;
  std::span<const std::string_view> keys() const override;
  std::span<const std::string_view> args() const override;
  Attempt interpret(const Value& reply) const override;
  std::string_view channel() const override { return lock_.channel; }
  // A key without expiry (a peer's lock taken without a TTL) is re-checked
  // at the poll cap.
  std::chrono::milliseconds fallback() const override { return lock_.poll_cap; }

 private:
  const SimplePrimitive& lock_;
  std::array<std::string_view, 3> keys_;
  std::size_t key_count_;
  std::array<std::string_view, 3> args_;
  std::size_t arg_count_;
};

}  // namespace distlock::sync
