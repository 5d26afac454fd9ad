// The fair lock's acquire step: fair_acquire.lua takes the lock or queues
// the owner; while queued, the Client's watchdog renews the owner's place
// (a LeaseState of Renewal::Kind::queue_place), and the owner listens on its
// own channel, where the release that frees the lock publishes its grant.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/lease_state.hpp"
#include "sync/holding_step.hpp"

namespace distlock::sync {

class FairPrimitive;

class FairStep final : public HoldingStep {
 public:
  // `count_after`: the owner's hold count if this acquire succeeds.
  FairStep(Services& client,
           const FairPrimitive& lock,
           std::shared_ptr<Holding> state,
           std::uint32_t count_after);

  const script::Script& script() const override;
  std::span<const std::string_view> keys() const override;
  std::span<const std::string_view> args() const override;
  Attempt interpret(const Value& reply) const override;
  std::string_view channel() const override { return channel_; }

  // A grant ("g", or "g:<token>" when fenced) for a holding whose lease is
  // the waiter's liveness lease (a watchdog lease): the lock is held since
  // the place was last confirmed (the grant's TTL is what remained of the
  // liveness the server counted from then, or later). Any other holding is
  // confirmed by an attempt that sets its own lease: nullopt.
  std::optional<Granted> interpret_message(std::string_view payload) const override;
  // Queued: the place is confirmed from `sent`, and renewed from now on.
  void contended(Clock::time_point sent) override;
  // Stops renewing the place; without the holding, leaves the queue and
  // gives back a grant that came too late (one send, ahead of any later
  // attempt of this owner on the same connection).
  void finished(bool acquired) override;

 private:
  void leave();

  const FairPrimitive& lock_;
  const std::string channel_;
  const std::string liveness_text_;
  const std::string count_text_;
  std::array<std::string_view, 5> keys_;
  std::size_t key_count_;
  std::array<std::string_view, 5> args_;
  std::size_t arg_count_;
  std::shared_ptr<runtime::LeaseState> place_;  // I/O thread; set while queued
};

}  // namespace distlock::sync
