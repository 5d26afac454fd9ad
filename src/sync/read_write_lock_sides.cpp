#include "sync/read_write_lock_sides.hpp"

#include <array>

#include "script/scripts.hpp"
#include "sync/holding_step.hpp"
#include "sync/key_layout.hpp"
#include "sync/lock_step.hpp"

namespace distlock::sync {
namespace {

// Redisson's unlock messages: a read unlock wakes one waiter of a plain
// RLock, a write unlock all of them. Our waiters pick by their own policy
// (readers all, writers one), so these only keep Redisson's waiters right.
constexpr std::string_view kReadUnlockMessage = "0";
constexpr std::string_view kWriteUnlockMessage = "1";

// A read hold: rw_read_acquire.lua; every read waiter wakes on an unlock
// (a writer's unlock lets all of them in together).
class ReadStep final : public HoldingStep {
 public:
  ReadStep(Services& client,
           const ReadSide& side,
           std::shared_ptr<Holding> state,
           std::uint32_t count_after)
      : HoldingStep(client, std::move(state), count_after),
        side_(side),
        write_field_(state_->owner + ":write") {
    keys_ = {side_.name(), state_->renewal.key2, side_.delay.key};
    key_count_ = !side_.delay.on() ? 2 : 3;
    args_ = {state_->ttl_text, state_->owner, write_field_};
  }

  const script::Script& script() const override { return script::scripts().rw_read_acquire; }
  std::span<const std::string_view> keys() const override { return {keys_.data(), key_count_}; }
  std::span<const std::string_view> args() const override { return args_; }
  // Same replies as acquire.lua without a fence.
  Attempt interpret(const Value& reply) const override { return interpret_acquire_reply(reply); }
  std::string_view channel() const override { return side_.names.channel; }
  runtime::Wake wake() const override { return runtime::Wake::all; }

 private:
  const ReadSide& side_;
  const std::string write_field_;
  std::array<std::string_view, 3> keys_;
  std::size_t key_count_;
  std::array<std::string_view, 3> args_;
};

// The write hold: rw_write_acquire.lua; one write waiter wakes per unlock.
class WriteStep final : public HoldingStep {
 public:
  WriteStep(Services& client,
            const WriteSide& side,
            std::shared_ptr<Holding> state,
            std::uint32_t count_after)
      : HoldingStep(client, std::move(state), count_after), side_(side) {
    if (!side_.delay.on()) {
      // Without a delay: KEYS[3] is the fencing counter, no ARGV[3].
      keys_ = {side_.name(), side_.names.key_prefix, side_.fence, {}};
      key_count_ = side_.fence.empty() ? 2 : 3;
      arg_count_ = 2;
    } else {
      keys_ = {side_.name(), side_.names.key_prefix, side_.delay.key, side_.fence};
      key_count_ = side_.fence.empty() ? 3 : 4;
      arg_count_ = 3;
    }
    args_ = {state_->ttl_text, state_->owner, side_.delay.text};
  }

  const script::Script& script() const override { return script::scripts().rw_write_acquire; }
  std::span<const std::string_view> keys() const override { return {keys_.data(), key_count_}; }
  std::span<const std::string_view> args() const override { return {args_.data(), arg_count_}; }
  Attempt interpret(const Value& reply) const override { return interpret_acquire_reply(reply); }
  std::string_view channel() const override { return side_.names.channel; }

 private:
  const WriteSide& side_;
  std::array<std::string_view, 4> keys_;
  std::size_t key_count_;
  std::array<std::string_view, 3> args_;
  std::size_t arg_count_;
};

}  // namespace

ReadWriteNames::ReadWriteNames(const std::string& name)
    : key_prefix(rw_key_prefix(name)), channel(rw_channel(name)) {}

// --- read side -------------------------------------------------------------

ReadSide::ReadSide(std::string name, std::chrono::milliseconds lock_delay)
    : Primitive(std::move(name), "read-write lock"),
      names(this->name()),
      delay(this->name(), lock_delay) {}

std::string ReadSide::timeout_prefix(const std::string& owner) const {
  return rw_timeout_prefix(name(), owner);
}

std::unique_ptr<HoldingStep> ReadSide::acquire_step(Services& client,
                                                    std::shared_ptr<Holding> state,
                                                    std::uint32_t count_after) const {
  return std::make_unique<ReadStep>(client, *this, std::move(state), count_after);
}

runtime::Renewal ReadSide::renewal(const std::string& owner) const {
  return {runtime::Renewal::Kind::rw_hold, name(), owner, timeout_prefix(owner)};
}

const script::Script& ReadSide::release_script() const {
  return script::scripts().rw_read_release;
}

void ReadSide::release_args(const Holding& state,
                            std::string_view expected,
                            ReleaseArgs& out) const {
  out.key(name());
  out.key(state.renewal.key2);
  out.key(names.key_prefix);
  out.arg(state.owner);
  out.arg(expected);
  out.arg(names.channel);
  out.arg(kReadUnlockMessage);
}

// --- write side ------------------------------------------------------------

WriteSide::WriteSide(std::string name, bool fenced, std::chrono::milliseconds lock_delay)
    : Primitive(std::move(name), "read-write lock"),
      names(this->name()),
      delay(this->name(), lock_delay) {
  if (fenced) fence = fencing_counter_key(this->name());
}

std::unique_ptr<HoldingStep> WriteSide::acquire_step(Services& client,
                                                     std::shared_ptr<Holding> state,
                                                     std::uint32_t count_after) const {
  return std::make_unique<WriteStep>(client, *this, std::move(state), count_after);
}

runtime::Renewal WriteSide::renewal(const std::string& owner) const {
  // No key2: renew.lua's 'r' branch then checks the write field alone; 'W'
  // is the same with the marker as key2.
  if (delay.on()) return {runtime::Renewal::Kind::rw_write_delayed, name(), owner, delay.key};
  return {runtime::Renewal::Kind::rw_hold, name(), owner, {}};
}

const script::Script& WriteSide::release_script() const {
  return script::scripts().rw_write_release;
}

void WriteSide::release_args(const Holding& state,
                             std::string_view expected,
                             ReleaseArgs& out) const {
  out.key(name());
  // A writer with a delay keeps or ends its marker.
  if (delay.on()) out.key(delay.key);
  out.arg(state.ttl_text);
  out.arg(state.owner);
  out.arg(expected);
  out.arg(names.channel);
  out.arg(kWriteUnlockMessage);
}

}  // namespace distlock::sync
