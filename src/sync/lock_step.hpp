// The reentrant lock's acquire step: acquire.lua on the lock hash (and the
// fencing counter), undone by release.lua with the count it would produce.
#pragma once

#include <array>
#include <memory>
#include <string_view>

#include "sync/holding_step.hpp"

namespace distlock::sync {

class LockKeys;

// Reads acquire.lua's reply: nil acquired (plain lock), {token} acquired
// (fenced), an integer the holder's PTTL (-1: no TTL) as contended, and
// {'delay', PTTL} (a lock-delay runs) as contended for that long.
Attempt interpret_acquire_reply(const Value& reply);
// True for acquire.lua's {'delay', PTTL}.
bool is_delay_reply(const Value& reply);

class LockStep final : public HoldingStep {
 public:
  // `count_after`: the owner's hold count if this acquire succeeds.
  LockStep(Services& client,
           const LockKeys& keys,
           std::shared_ptr<Holding> state,
           std::uint32_t count_after);

  const script::Script& script() const override;
  std::span<const std::string_view> keys() const override;
  std::span<const std::string_view> args() const override;
  Attempt interpret(const Value& reply) const override;
  std::string_view channel() const override;

 private:
  const LockKeys& lock_;
  std::array<std::string_view, 3> keys_;
  std::size_t key_count_;
  std::array<std::string_view, 3> args_;
  std::size_t arg_count_;
};

}  // namespace distlock::sync
