#include "sync/lock_step.hpp"

#include "distlock/error.hpp"
#include "runtime/watchdog.hpp"
#include "script/scripts.hpp"
#include "sync/lock_ops.hpp"

namespace distlock::sync {

LockStep::LockStep(Services& client, std::shared_ptr<Holding> state, std::uint32_t count_after)
    : client_(client), state_(std::move(state)), count_after_(count_after) {
  keys_ = {state_->keys->name, state_->keys->fence};
  key_count_ = state_->keys->fence.empty() ? 1 : 2;
  args_ = {state_->ttl_text, state_->owner};
}

const script::Script& LockStep::script() const {
  return script::scripts().acquire;
}

std::span<const std::string_view> LockStep::keys() const {
  return {keys_.data(), key_count_};
}

std::span<const std::string_view> LockStep::args() const {
  return args_;
}

std::string_view LockStep::route_key() const {
  return state_->keys->name;
}

Attempt LockStep::interpret(const Value& reply) const {
  return interpret_acquire_reply(reply);
}

Attempt interpret_acquire_reply(const Value& reply) {
  if (reply.is_nil()) return Attempt::acquired(std::nullopt);
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

void LockStep::acquired(const Attempt& attempt, Clock::time_point sent) {
  // A re-entry keeps the holding's token.
  if (!state_->active.load()) state_->fencing_token = attempt.token;
  state_->confirm(sent);
  state_->active = true;
  client_.watchdog.activated(*state_);
}

void LockStep::undo() {
  // Releasing with the count this acquire would have produced removes exactly
  // the holding it made, and nothing when it did not run (the count differs).
  // It is sent until the server answers: a cleanup lost too would leave a
  // hold the owner does not know of (issue 8).
  cleanup_ = PendingRelease::start(client_, state_, count_after_, false, false);
}

std::string_view LockStep::channel() const {
  return state_->keys->channel;
}

std::chrono::milliseconds LockStep::fallback() const {
  // A holder without TTL is re-checked every third of our lease.
  return std::chrono::milliseconds(state_->ttl.count() / 3 + 1);
}

}  // namespace distlock::sync
