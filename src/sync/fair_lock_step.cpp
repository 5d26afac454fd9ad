#include "sync/fair_lock_step.hpp"

#include <charconv>

#include "runtime/watchdog.hpp"
#include "script/scripts.hpp"
#include "sync/fair_lock.hpp"
#include "sync/lock_step.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {

FairStep::FairStep(Services& client,
                   const FairPrimitive& lock,
                   std::shared_ptr<Holding> state,
                   std::uint32_t count_after)
    : HoldingStep(client, std::move(state), count_after),
      lock_(lock),
      channel_(lock.waiter_channel(state_->owner)),
      liveness_text_(std::to_string(client.options.watchdog_timeout.count())),
      count_text_(std::to_string(count_after)) {
  if (!lock_.delay.on()) {
    // Without a delay: KEYS[4] is the fencing counter, no ARGV[5].
    keys_ = {lock_.name, lock_.queue, lock_.timeout, lock_.fence, {}};
    key_count_ = lock_.fence.empty() ? 3 : 4;
    arg_count_ = 4;
  } else {
    keys_ = {lock_.name, lock_.queue, lock_.timeout, lock_.delay.key, lock_.fence};
    key_count_ = lock_.fence.empty() ? 4 : 5;
    arg_count_ = 5;
  }
  args_ = {state_->ttl_text, state_->owner, liveness_text_, count_text_, lock_.delay.text};
}

const script::Script& FairStep::script() const {
  return script::scripts().fair_acquire;
}

std::span<const std::string_view> FairStep::keys() const {
  return {keys_.data(), key_count_};
}

std::span<const std::string_view> FairStep::args() const {
  return {args_.data(), arg_count_};
}

Attempt FairStep::interpret(const Value& reply) const {
  // Same replies as acquire.lua: nil / {token} acquired, an integer to wait.
  return interpret_acquire_reply(reply);
}

std::optional<Granted> FairStep::interpret_message(std::string_view payload) const {
  if (!place_ || payload.empty() || payload[0] != 'g') return std::nullopt;
  // A fixed lease (or a watchdog lease other than the liveness lease) is not
  // what the grant's TTL gives: an attempt confirms it with its own lease.
  if (!state_->watchdog || state_->ttl != client_.options.watchdog_timeout) return std::nullopt;
  // A holder with a lock-delay sets its marker in that confirming attempt.
  if (lock_.delay.on()) return std::nullopt;
  std::optional<std::uint64_t> token;
  if (payload.size() > 2 && payload[1] == ':') {
    std::uint64_t value = 0;
    const auto* end = payload.data() + payload.size();
    const auto [ptr, ec] = std::from_chars(payload.data() + 2, end, value);
    if (ec != std::errc() || ptr != end) return std::nullopt;
    token = value;
  } else if (payload.size() != 1 || lock_.fenced()) {
    return std::nullopt;
  }
  // The last confirmed ZADD of the place was sent before the server ran it,
  // and the grant (which removes the place) came after it: the grant's TTL,
  // what remained of the liveness the server counted from that ZADD or a
  // later one, ends no earlier than that send + the liveness lease.
  const auto since = place_->deadline() - place_->believed;
  return Granted{Attempt::acquired(token), since};
}

void FairStep::contended(Clock::time_point sent) {
  if (!place_ || place_->lost()) {
    if (place_) client_.watchdog.remove(place_.get());
    // No lost handler: losing a place is no lost lease; the next attempt
    // queues the owner again.
    place_ = std::make_shared<runtime::LeaseState>(
        state_->name, state_->owner, client_.options.watchdog_timeout, true,
        runtime::Renewal{runtime::Renewal::Kind::queue_place, lock_.timeout, state_->owner,
                         lock_.queue},
        client_.options.clock_drift_factor, nullptr);
    client_.watchdog.add(place_);
  }
  place_->confirm(sent);
  place_->renewal_sent(sent);  // the attempt renewed it: the next tick need not
  place_->active = true;
  client_.watchdog.activated(*place_);
}

void FairStep::finished(bool acquired) {
  if (place_) {
    place_->released = true;
    client_.watchdog.remove(place_.get());
  }
  if (!acquired) leave();
}

// The leave: one fair_release.lua call in mode 'l'. Its outcome needs no
// handling: a leave that does not run leaves a place nobody renews (dropped
// within one liveness lease) and, at worst, a grant that lapses with it.
void FairStep::leave() {
  ReleaseArgs keys;
  lock_.keys(keys);
  const auto k = keys.key_span();
  std::vector<std::string> args{"0", state_->owner, count_after_ == 1 ? "1" : "0",
                                lock_.channel_prefix, "l"};
  if (lock_.delay.on()) args.emplace_back("d");  // KEYS[4] is the marker
  client_.topology.call_detached(std::string(lock_.route_key()), script::scripts().fair_release,
                                 std::vector<std::string>(k.begin(), k.end()), std::move(args), {});
}

}  // namespace distlock::sync
