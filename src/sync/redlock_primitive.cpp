#include "sync/redlock_primitive.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>

#include "script/scripts.hpp"
#include "sync/holding.hpp"
#include "sync/lock_step.hpp"
#include "sync/services.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {

std::string redlock_release_tag(std::string_view token) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(std::hash<std::string_view>{}(token)));
  return "rl:" + std::string(hex, 16);
}

RedlockPrimitive::RedlockPrimitive(std::string name,
                                   std::chrono::milliseconds retry_delay,
                                   std::chrono::milliseconds retry_jitter)
    : SimplePrimitive(std::move(name), false, retry_delay, std::chrono::milliseconds(0)),
      retry_jitter_(retry_jitter) {}

std::string RedlockPrimitive::release_tag(const std::string& owner) const {
  return redlock_release_tag(owner);
}

std::unique_ptr<HoldingStep> RedlockPrimitive::acquire_step(Services& client,
                                                            std::shared_ptr<Holding> state,
                                                            std::uint32_t) const {
  return std::make_unique<RedlockStep>(client, *this, std::move(state));
}

void RedlockPrimitive::release_args(const Holding& state,
                                    std::string_view,
                                    ReleaseArgs& out) const {
  out.key(name());
  out.arg(state.owner);
  out.arg(channel);
  out.arg(state.release_tag);
}

std::chrono::milliseconds RedlockPrimitive::poll() const {
  if (retry_jitter_.count() <= 0) return poll_cap;
  // Only spreads retries apart: no secret, so no CSPRNG.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<std::int64_t> extra(0, retry_jitter_.count());
  return poll_cap + std::chrono::milliseconds(extra(rng));
}

RedlockStep::RedlockStep(Services& client,
                         const RedlockPrimitive& lock,
                         std::shared_ptr<Holding> state)
    : SimpleStep(client, lock, std::move(state)), poll_(lock.poll()) {}

bool RedlockStep::refuse_late() {
  const auto& lock = static_cast<const RedlockPrimitive&>(*state_->primitive);
  // Not queued (closing): the keys expire with the lease.
  (void)client_.topology.call_detached(std::string(lock.name()), script::scripts().simple_release,
                                       {std::string(lock.name())},
                                       {state_->owner, lock.channel, state_->release_tag}, {});
  return true;
}

Attempt RedlockStep::interpret(const Value& reply) const {
  Attempt a = interpret_acquire_reply(reply);
  if (a.kind == Attempt::Kind::contended) {
    a.retry_after = std::min(a.retry_after.value_or(poll_), poll_);
  }
  return a;
}

}  // namespace distlock::sync
