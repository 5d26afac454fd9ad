// The acquire step of a permit holder: semaphore_acquire.lua takes n
// permits for the holder, all or nothing; contended, it waits on the
// semaphore's channel (a release of k wakes up to k waiters) or until the
// earliest holder's lease could end.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "sync/holding_step.hpp"

namespace distlock::sync {

class PermitPrimitive;

class PermitStep : public HoldingStep {
 public:
  // Takes `n` permits for the holder `state` of `semaphore`. An attempt
  // without reply is undone by a release retiring the holder (HoldingStep).
  PermitStep(Services& client,
             const PermitPrimitive& semaphore,
             std::shared_ptr<Holding> state,
             std::int64_t n);

  const script::Script& script() const override;
  std::span<const std::string_view> keys() const override { return keys_; }
  std::span<const std::string_view> args() const override { return args_; }
  // nil: taken. Otherwise the ms until the earliest lease could end (-1:
  // no holder), retried then but at least every fallback().
  Attempt interpret(const Value& reply) const override;
  std::string_view channel() const override { return channel_; }
  runtime::Wake wake() const override { return runtime::Wake::count_in_payload; }

 protected:
  const std::int64_t n_;

 private:
  const std::string n_text_;
  const std::string_view channel_;
  std::array<std::string_view, 5> keys_;
  std::array<std::string_view, 4> args_;
};

}  // namespace distlock::sync
