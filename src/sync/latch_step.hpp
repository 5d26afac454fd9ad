// The latch's names and its wait step.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "sync/acquire_step.hpp"

namespace distlock::sync {

// A latch's key and channel. The constructor validates the name (non-empty,
// at most 64 KiB) and throws Error(invalid_argument).
struct LatchNames {
  explicit LatchNames(std::string latch_name);
  std::string name;     // the key: a string holding the count
  std::string channel;  // redisson_countdownlatch__channel:{name}
  std::array<std::string_view, 2> keys() const { return {name, channel}; }
};

// One attempt of a latch wait reads the count (latch_wait.lua): acquired at
// 0 (open), contended without a retry-after above it; the waiter then joins
// the channel, where reaching zero wakes all (Wake::all). Nothing to undo:
// the attempt only reads.
class LatchStep final : public AcquireStep {
 public:
  explicit LatchStep(std::shared_ptr<const LatchNames> names);

  const script::Script& script() const override;
  std::span<const std::string_view> keys() const override { return {keys_.data(), 1}; }
  std::span<const std::string_view> args() const override { return {}; }
  std::string_view route_key() const override { return names_->name; }
  Attempt interpret(const Value& reply) const override;
  void acquired(const Attempt&, Clock::time_point) override {}
  void undo() override {}
  std::string_view channel() const override { return names_->channel; }
  runtime::Wake wake() const override { return runtime::Wake::all; }
  std::chrono::milliseconds fallback() const override;
  MetricPrimitive metric() const override { return MetricPrimitive::latch; }

 private:
  std::shared_ptr<const LatchNames> names_;
  std::array<std::string_view, 1> keys_;
};

}  // namespace distlock::sync
