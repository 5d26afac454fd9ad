// One attempt of a rate limiter's acquire (rate_limiter_acquire.lua): taken,
// or refused with the server's wait until n permits are due, which the loop
// sleeps (there is no channel: channel() is "").
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "sync/acquire_step.hpp"

namespace distlock::sync {

class RateLimiterStep final : public AcquireStep {
 public:
  // `deadline`: when the caller gives up (nullopt: never). A refusal whose
  // wait ends after it finishes the loop at once, not acquired and without
  // an error (Attempt::failed with an empty ec): sleeping until the deadline
  // could not change the answer.
  RateLimiterStep(std::shared_ptr<const std::string> name,
                  std::int64_t n,
                  std::optional<Clock::time_point> deadline);

  const script::Script& script() const override;
  std::span<const std::string_view> keys() const override { return keys_; }
  std::span<const std::string_view> args() const override { return args_; }
  std::string_view route_key() const override { return *name_; }
  // {1,0} acquired; {0,ms} contended(ms); {-1,0} / {-2,rate} failed with
  // invalid_argument (no rate set / n above the rate).
  Attempt interpret(const Value& reply) const override;
  void acquired(const Attempt&, Clock::time_point) override {}
  // An attempt without a reply may have consumed its permits: they are not
  // given back (a give-back could overfill the bucket if it did not run).
  void undo() override {}
  std::string_view channel() const override { return {}; }
  // Not used: every refusal carries the server's wait.
  std::chrono::milliseconds fallback() const override { return std::chrono::milliseconds(1); }
  MetricPrimitive metric() const override { return MetricPrimitive::rate_limiter; }

 private:
  std::shared_ptr<const std::string> name_;
  std::string n_text_;
  std::optional<Clock::time_point> deadline_;
  std::array<std::string_view, 1> keys_;
  std::array<std::string_view, 1> args_;
};

}  // namespace distlock::sync
