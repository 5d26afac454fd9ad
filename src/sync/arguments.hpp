// Argument checks and error plumbing every primitive shares: the name rule,
// the wait and lease rules, the deadline of a wait, and throwing an error
// that an error_code& twin reported. Every check runs before any I/O.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "distlock/error.hpp"
#include "distlock/lock_options.hpp"
#include "sync/acquire_loop.hpp"

namespace distlock::sync {

using std::chrono::milliseconds;

// Throws Error(invalid_argument) unless `name` is non-empty and at most
// 64 KiB; `what` names the primitive in the message ("lock", "latch", ...).
void validate_name(const std::string& name, std::string_view what);

// What is wrong with a wait and a lease, or empty when both are usable: a
// negative wait, a lease that is not positive (the wait is named first).
// nullopt means "none given", which is always usable.
std::string wait_lease_problem(std::optional<milliseconds> wait,
                               std::optional<milliseconds> lease = std::nullopt);

// Throw Error(invalid_argument, prefix + the problem) for a negative wait /
// a lease that is not positive.
void check_wait(std::optional<milliseconds> wait, std::string_view prefix = {});
void check_lease(std::optional<milliseconds> lease, std::string_view prefix = {});

// The error_code form of both checks: sets ec to invalid_argument and
// returns true when either fails; clears ec otherwise.
bool rejected(std::optional<milliseconds> wait,
              std::optional<milliseconds> lease,
              std::error_code& ec);

// LockOptions::lock_delay when it is at least 0 and under 24 hours; throws
// Error(invalid_argument) naming the value otherwise.
milliseconds checked_lock_delay(const LockOptions& options);

// Throws Error(ec, what) when ec is set.
inline void throw_if(const std::error_code& ec, const std::string& what) {
  if (ec) throw Error(ec, what);
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
  throw_if(ec, what);
  return result;
}

}  // namespace distlock::sync
