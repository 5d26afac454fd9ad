/// @file
/// How every timed member turns a caller's wait into the library's unit: one
/// rule for Lock, MultiLock, RedlockLock, Semaphore, Latch, RateLimiter and
/// their async forms.
#pragma once

#include <chrono>

namespace distlock::detail {

/// A wait in whole milliseconds, rounded away from zero: up for a wait (a 1 us
/// wait must not become a zero wait), down for a negative one (which must stay
/// negative, to be rejected, rather than become zero). A wait too long for
/// milliseconds (hours::max(), seconds::max()) saturates to
/// milliseconds::max(), which waits as long as it takes; a plain
/// ceil<milliseconds> would overflow it into a negative wait.
template <class Rep, class Period>
std::chrono::milliseconds wait_ms(const std::chrono::duration<Rep, Period>& d) {
  using Ms = std::chrono::duration<long double, std::milli>;
  if (Ms(d) >= Ms(std::chrono::milliseconds::max())) return std::chrono::milliseconds::max();
  if (d < std::chrono::duration<Rep, Period>::zero()) {
    return std::chrono::floor<std::chrono::milliseconds>(d);
  }
  return std::chrono::ceil<std::chrono::milliseconds>(d);
}

/// The time from now until `deadline` on its own clock, zero when it has
/// passed (a deadline in the past makes one attempt).
template <class Clock, class Duration>
auto time_left(const std::chrono::time_point<Clock, Duration>& deadline) {
  const auto left = deadline - Clock::now();
  return left > decltype(left)::zero() ? left : decltype(left)::zero();
}

}  // namespace distlock::detail
