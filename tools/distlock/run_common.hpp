// What `run` and `sem run` share: their durations, the not-acquired and
// finished exit codes, and acquiring as the options say.
#pragma once

#include <chrono>
#include <optional>
#include <system_error>

#include "child.hpp"
#include "commands.hpp"

namespace distlock::cli {

struct Durations {
  std::optional<std::chrono::milliseconds> wait;   // nullopt: forever
  std::optional<std::chrono::milliseconds> lease;  // nullopt: the watchdog's
  std::chrono::milliseconds kill_after{10'000};
};

// Parses --wait, --lease and --kill-after; prints a usage error and returns
// false for a bad one.
bool parse_durations(const RunOptions& o, Durations& out);
// False (after a usage message) when no command follows "--".
bool check_command(const RunOptions& o);
// Says so (unless quiet) and returns -E's code, or kExitNotAcquired.
int not_acquired(const RunOptions& o);
// The exit code once CMD has finished and the holding was released (or its
// release failed with release_ec): kExitLeaseLost when the lease was lost
// while CMD ran, else CMD's.
int finish(const ChildResult& child, const std::error_code& release_ec, const RunOptions& o);

// Acquires `lock` (a Lock or a RedlockLock) as the durations say: nullopt
// with ec clear when not acquired in time, nullopt with ec set on failure.
template <class AnyLock>
auto acquire_as(AnyLock& lock, const Durations& d, std::error_code& ec)
    -> std::optional<decltype(lock.acquire(ec))> {
  if (!d.wait && !d.lease) {
    auto lease = lock.acquire(ec);
    if (ec) return std::nullopt;
    return lease;
  }
  // milliseconds::max() waits as long as it takes (wait_time.hpp).
  return lock.try_acquire_for(d.wait.value_or(std::chrono::milliseconds::max()), d.lease, ec);
}

}  // namespace distlock::cli
