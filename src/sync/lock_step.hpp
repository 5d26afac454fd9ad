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
// (fenced), an integer the holder's PTTL (-1: no TTL) as contended.
Attempt interpret_acquire_reply(const Value& reply);

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
  std::array<std::string_view, 2> keys_;
  std::size_t key_count_;
  std::array<std::string_view, 2> args_;
};

}  // namespace distlock::sync
