// The distlock command's exit codes: stable, documented in docs/cli.md and
// docs/distlock.1. The numbers follow sysexits.h where one fits.
#pragma once

namespace distlock::cli {

// Bad usage: an unknown option, a missing argument, a bad duration or URI,
// force-unlock without --yes (EX_USAGE).
inline constexpr int kExitUsage = 64;
// Redis could not be reached, or refused us (auth, ACL, an error reply)
// (EX_UNAVAILABLE).
inline constexpr int kExitUnavailable = 69;
// The lock (or permit) was not acquired within --wait (EX_TEMPFAIL).
// --conflict-exit-code replaces it.
inline constexpr int kExitNotAcquired = 75;
// The lease was lost while CMD ran: CMD was sent SIGTERM (then SIGKILL).
inline constexpr int kExitLeaseLost = 76;
// CMD could not be executed (not found / not executable), as a shell.
inline constexpr int kExitNotFound = 127;
inline constexpr int kExitCannotExecute = 126;
// A child killed by signal N makes distlock exit kExitSignalBase + N.
inline constexpr int kExitSignalBase = 128;

}  // namespace distlock::cli
