// The reentrant lock's acquire step: acquire.lua on the lock hash (and the
// fencing counter), undone by release.lua with the count it would produce.
#pragma once

#include <array>
#include <memory>
#include <string_view>

#include "sync/acquire_step.hpp"
#include "sync/holding.hpp"

namespace distlock::sync {

struct Services;
class PendingRelease;

// Reads acquire.lua's reply: nil acquired (plain lock), {token} acquired
// (fenced), an integer the holder's PTTL (-1: no TTL) as contended.
Attempt interpret_acquire_reply(const Value& reply);

class LockStep final : public AcquireStep {
 public:
  // `count_after`: the owner's hold count if this acquire succeeds.
  LockStep(Services& client, std::shared_ptr<Holding> state, std::uint32_t count_after);

  const script::Script& script() const override;
  std::span<const std::string_view> keys() const override;
  std::span<const std::string_view> args() const override;
  std::string_view route_key() const override;
  Attempt interpret(const Value& reply) const override;
  void acquired(const Attempt& attempt, Clock::time_point sent) override;
  void undo() override;
  std::string_view channel() const override;
  std::chrono::milliseconds fallback() const override;
  std::chrono::nanoseconds validity() const override { return state_->believed; }

  // After the op finished: the undo of an attempt that got no reply, still
  // being settled in the background; otherwise null.
  const std::shared_ptr<PendingRelease>& cleanup() const noexcept { return cleanup_; }

 private:
  Services& client_;
  std::shared_ptr<Holding> state_;
  const std::uint32_t count_after_;
  std::array<std::string_view, 2> keys_;
  std::size_t key_count_;
  std::array<std::string_view, 2> args_;
  std::shared_ptr<PendingRelease> cleanup_;
};

}  // namespace distlock::sync
