// Reconnect delays: capped exponential backoff with jitter.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace distlock::net {

// The delay before reconnect attempt `attempt` (0 for the first): the cap is
// min(max, min * 2^attempt); the delay is drawn uniformly from [cap/2, cap]
// using `random` (any 64-bit value), so many clients dropped at once do not
// reconnect in lockstep, yet no delay is shorter than half the cap.
inline std::chrono::milliseconds backoff_delay(std::chrono::milliseconds min,
                                               std::chrono::milliseconds max,
                                               unsigned attempt,
                                               std::uint64_t random) {
  const auto base = std::max<std::int64_t>(min.count(), 1);
  const auto limit = std::max<std::int64_t>(max.count(), base);
  const unsigned shift = std::min(attempt, 30u);
  const std::int64_t cap = std::min<std::int64_t>(limit, base << shift);
  const std::int64_t half = cap / 2;
  const auto span = static_cast<std::uint64_t>(cap - half + 1);
  return std::chrono::milliseconds(half + static_cast<std::int64_t>(random % span));
}

}  // namespace distlock::net
