// Argument checks and error plumbing shared by Lock's member functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <system_error>

#include "distlock/error.hpp"
#include "sync/acquire_loop.hpp"

namespace distlock::sync {

using std::chrono::milliseconds;

inline void check_lease(std::optional<milliseconds> lease) {
  if (lease && lease->count() <= 0) {
    throw Error(errc::invalid_argument,
                "lease must be positive, got " + std::to_string(lease->count()) + " ms");
  }
}

inline void check_wait(milliseconds wait) {
  if (wait.count() < 0) {
    throw Error(errc::invalid_argument,
                "wait must not be negative, got " + std::to_string(wait.count()) + " ms");
  }
}

[[noreturn]] inline void throw_outcome(const AcquireOutcome& o) {
  throw Error(o.ec, o.message.empty() ? std::string("lock failed") : o.message);
}

// nullopt (wait as long as it takes) for no wait, and for one so long that
// now + wait would not fit the clock (milliseconds::max(), which a wait of
// seconds::max() saturates to): that sum would overflow into the past.
inline std::optional<Clock::time_point> deadline_after(std::optional<milliseconds> wait) {
  if (!wait) return std::nullopt;
  const auto now = Clock::now();
  const auto room = std::chrono::duration_cast<milliseconds>(Clock::time_point::max() - now);
  if (*wait >= room) return std::nullopt;
  return now + *wait;
}

// Calls f(ec, what) and throws Error(ec, what) when it fails: how a throwing
// member shares the code of its error_code& twin and keeps the message.
template <class F>
auto or_throw(F f) {
  std::error_code ec;
  std::string what;
  auto result = f(ec, what);
  if (ec) throw Error(ec, what);
  return result;
}

}  // namespace distlock::sync
