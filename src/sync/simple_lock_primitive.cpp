#include "sync/simple_lock_primitive.hpp"

#include <algorithm>
#include <atomic>

#include "distlock/simple_lock.hpp"
#include "runtime/identity.hpp"
#include "script/scripts.hpp"
#include "sync/key_layout.hpp"
#include "sync/lock_step.hpp"
#include "sync/simple_lock_poll.hpp"
#include "sync/thread_holds.hpp"

namespace distlock::sync {
namespace {

constexpr std::string_view kUnlockMessage = "0";

std::atomic<std::chrono::milliseconds::rep> poll_cap_ms{SimpleLock::kPollCap.count()};

}  // namespace

std::chrono::milliseconds simple_lock_poll_cap() noexcept {
  return std::chrono::milliseconds(poll_cap_ms.load());
}

void set_simple_lock_poll_cap(std::chrono::milliseconds cap) noexcept {
  poll_cap_ms.store(cap.count());
}

SimplePrimitive::SimplePrimitive(std::string lock_name,
                                 bool fenced,
                                 std::chrono::milliseconds cap,
                                 std::chrono::milliseconds lock_delay)
    : Primitive(std::move(lock_name), "simple lock"),
      channel(simple_lock_channel(name())),
      delay(name(), lock_delay),
      poll_cap(cap) {
  if (fenced) fence = fencing_counter_key(name());
}

std::string SimplePrimitive::owner_for(std::string) const {
  // The token is the lock's value, compared on release and renewal: a fresh
  // one per acquisition, so a late release of an earlier holding (ours or a
  // peer's) can never match a later one.
  return runtime::random_token();
}

std::unique_ptr<HoldingStep> SimplePrimitive::acquire_step(Services& client,
                                                           std::shared_ptr<Holding> state,
                                                           std::uint32_t) const {
  return std::make_unique<SimpleStep>(client, *this, std::move(state));
}

runtime::Renewal SimplePrimitive::renewal(const std::string& owner) const {
  if (delay.on()) {
    return {runtime::Renewal::Kind::string_value_delayed, name(), owner, delay.key};
  }
  return {runtime::Renewal::Kind::string_value, name(), owner, {}};
}

const script::Script& SimplePrimitive::release_script() const {
  return script::scripts().simple_release;
}

void SimplePrimitive::release_args(const Holding& state, std::string_view, ReleaseArgs& out) const {
  // Not reentrant: every release is of the one hold, so the expected count
  // (always 1) is not needed. A repeat after a lost reply finds the key gone
  // (-1), which PendingRelease reads as released for a hold valid until the
  // unlock.
  out.key(name());
  // A holder with a delay ends its marker.
  if (delay.on()) out.key(delay.key);
  out.arg(state.owner);
  out.arg(channel);
  out.arg(kUnlockMessage);
}

std::uint32_t SimplePrimitive::query_count(const Services& client,
                                           const std::string&,
                                           std::error_code& ec,
                                           std::string& what) const {
  ec.clear();
  const auto held = thread_holding(client, *this);
  if (!held) return 0;
  const std::string_view args[] = {"GET", name()};
  const Value v = query(client, args, ec, what);
  if (ec) return 0;
  return v.is_string() && v.as_string() == held->owner ? 1 : 0;
}

// --- SimpleStep ------------------------------------------------------------------

SimpleStep::SimpleStep(Services& client,
                       const SimplePrimitive& lock,
                       std::shared_ptr<Holding> state)
    : HoldingStep(client, std::move(state), 1), lock_(lock) {
  if (!lock_.delay.on()) {
    // Without a delay (and on Redlock's nodes): KEYS[2] is the fencing
    // counter, no ARGV[3].
    keys_ = {lock_.name(), lock_.fence, {}};
    key_count_ = lock_.fence.empty() ? 1 : 2;
    args_ = {state_->ttl_text, state_->owner, {}};
    arg_count_ = 2;
  } else {
    keys_ = {lock_.name(), lock_.delay.key, lock_.fence};
    key_count_ = lock_.fence.empty() ? 2 : 3;
    args_ = {state_->ttl_text, state_->owner, lock_.delay.text};
    arg_count_ = 3;
  }
}

const script::Script& SimpleStep::script() const {
  return script::scripts().simple_acquire;
}

std::span<const std::string_view> SimpleStep::keys() const {
  return {keys_.data(), key_count_};
}

std::span<const std::string_view> SimpleStep::args() const {
  return {args_.data(), arg_count_};
}

Attempt SimpleStep::interpret(const Value& reply) const {
  // Same reply shape as acquire.lua's.
  Attempt a = interpret_acquire_reply(reply);
  // A lock-delay ends at its marker's PTTL, with no message and no peer
  // that could end it sooner (force_unlock publishes): no poll cap then.
  if (a.kind == Attempt::Kind::contended && a.retry_after && !is_delay_reply(reply)) {
    a.retry_after = std::min(*a.retry_after, lock_.poll_cap);
  }
  return a;
}

}  // namespace distlock::sync
