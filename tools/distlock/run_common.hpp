// What `run` and `sem run` share: their durations, the not-acquired and
// finished exit codes.
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

}  // namespace distlock::cli
