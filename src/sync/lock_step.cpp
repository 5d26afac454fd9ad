#include "sync/lock_step.hpp"

#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/lock_keys.hpp"

namespace distlock::sync {
namespace {

constexpr std::string_view kUnlockMessage = "0";

}  // namespace

LockStep::LockStep(Services& client,
                   const LockKeys& keys,
                   std::shared_ptr<Holding> state,
                   std::uint32_t count_after)
    : HoldingStep(client, std::move(state), count_after), lock_(keys) {
  if (!lock_.delay.on()) {
    // Without a delay: KEYS[2] is the fencing counter, no ARGV[3].
    keys_ = {lock_.name, lock_.fence, {}};
    key_count_ = lock_.fence.empty() ? 1 : 2;
    args_ = {state_->ttl_text, state_->owner, {}};
    arg_count_ = 2;
  } else {
    keys_ = {lock_.name, lock_.delay.key, lock_.fence};
    key_count_ = lock_.fence.empty() ? 2 : 3;
    args_ = {state_->ttl_text, state_->owner, lock_.delay.text};
    arg_count_ = 3;
  }
}

const script::Script& LockStep::script() const {
  return script::scripts().acquire;
}

std::span<const std::string_view> LockStep::keys() const {
  return {keys_.data(), key_count_};
}

std::span<const std::string_view> LockStep::args() const {
  return {args_.data(), arg_count_};
}

Attempt LockStep::interpret(const Value& reply) const {
  return interpret_acquire_reply(reply);
}

bool is_delay_reply(const Value& reply) {
  if (!reply.is_array()) return false;
  const auto& parts = reply.as_array();
  return parts.size() == 2 && parts[0].is_string() && parts[0].as_string() == "delay" &&
         parts[1].is_integer();
}

Attempt interpret_acquire_reply(const Value& reply) {
  if (reply.is_nil()) return Attempt::acquired(std::nullopt);
  if (is_delay_reply(reply)) {
    const auto pttl = reply.as_array()[1].as_integer();
    if (pttl < 0) return Attempt::contended(std::nullopt);
    return Attempt::contended(std::chrono::milliseconds(pttl));
  }
  if (reply.is_array()) {
    const auto& parts = reply.as_array();
    std::optional<std::uint64_t> token;
    if (!parts.empty() && parts[0].is_integer()) {
      token = static_cast<std::uint64_t>(parts[0].as_integer());
    }
    return Attempt::acquired(token);
  }
  if (reply.is_integer()) {
    const auto pttl = reply.as_integer();
    if (pttl < 0) return Attempt::contended(std::nullopt);
    return Attempt::contended(std::chrono::milliseconds(pttl));
  }
  return Attempt::failed(errc::protocol_error, "unexpected acquire reply " + reply.to_string());
}

std::string_view LockStep::channel() const {
  return lock_.channel;
}

// --- LockKeys' acquire and release ---------------------------------------------

std::unique_ptr<HoldingStep> LockKeys::acquire_step(Services& client,
                                                    std::shared_ptr<Holding> state,
                                                    std::uint32_t count_after) const {
  return std::make_unique<LockStep>(client, *this, std::move(state), count_after);
}

const script::Script& LockKeys::release_script() const {
  return script::scripts().release;
}

void LockKeys::release_args(const Holding& state,
                            std::string_view expected,
                            ReleaseArgs& out) const {
  out.key(name);
  // A holder with a delay keeps or ends its marker.
  if (delay.on()) out.key(delay.key);
  out.arg(state.ttl_text);
  out.arg(state.owner);
  out.arg(expected);
  out.arg(channel);
  out.arg(kUnlockMessage);
}

}  // namespace distlock::sync
