// A Redlock lock is the SET NX lock (SimplePrimitive: node redlock's key
// layout) run over a topology::Quorum. What differs is small: it counts
// under MetricPrimitive::redlock, each release publishes a tag naming that
// release (so a waiter hears it once, from whichever node is first), and a
// waiter with no wake-up retries after the group's retry delay plus jitter
// (peers such as node redlock publish nothing). How the nodes' answers to
// its scripts become one reply is redlock_rules.hpp.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "sync/simple_lock_primitive.hpp"

namespace distlock::sync {

// "rl:" + 16 hex digits of a hash of `token`: what the release of that
// holding publishes on every node (not the token, which stays secret).
std::string redlock_release_tag(std::string_view token);

class RedlockPrimitive final : public SimplePrimitive {
 public:
  // Throws Error(invalid_argument) for a bad name (as SimplePrimitive).
  RedlockPrimitive(std::string name,
                   std::chrono::milliseconds retry_delay,
                   std::chrono::milliseconds retry_jitter);

  std::string_view kind() const override { return "redlock"; }
  MetricPrimitive metric() const override { return MetricPrimitive::redlock; }
  std::string release_tag(const std::string& owner) const override;
  std::unique_ptr<HoldingStep> acquire_step(Services& client,
                                            std::shared_ptr<Holding> state,
                                            std::uint32_t count_after) const override;
  void release_args(const Holding& state,
                    std::string_view expected,
                    ReleaseArgs& out) const override;

  // retry_delay plus a uniform random part of retry_jitter.
  std::chrono::milliseconds poll() const;

 private:
  const std::chrono::milliseconds retry_jitter_;
};

// SimpleStep with the group's poll: a contended attempt retries on a
// release's message, else after min(the majority's TTL, poll()).
class RedlockStep final : public SimpleStep {
 public:
  RedlockStep(Services& client, const RedlockPrimitive& lock, std::shared_ptr<Holding> state);
  Attempt interpret(const Value& reply) const override;
  std::chrono::milliseconds fallback() const override { return poll_; }
  // Redlock's rule: a majority won after the validity is spent is a failed
  // attempt. Its token is deleted on every node once (no resend: the next
  // attempt reuses the token and must not meet a late repeat).
  bool refuse_late() override;

 private:
  const std::chrono::milliseconds poll_;
};

}  // namespace distlock::sync
