// Running CMD as a child of distlock while a lease is held: signal
// forwarding, the lease-lost kill sequence, and the exit status.
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

namespace distlock::cli {

// Installs distlock's handlers for SIGINT, SIGTERM, SIGHUP and SIGCHLD. Call
// once, first thing in main (before any thread starts). Until
// begin_supervision() a SIGINT/SIGTERM/SIGHUP ends distlock at once with
// 128 + signo (nothing is held yet, or what an acquire in flight took
// expires with its lease); from then on they are queued for supervise().
void install_signal_handlers();
// From here on, SIGINT/SIGTERM/SIGHUP are kept for supervise() to forward.
// Call as soon as the lock or permit is held, before spawning.
void begin_supervision();

struct ChildResult {
  // What distlock exits with: CMD's exit code, 128 + signo when a signal
  // killed it, 127/126 when it could not be executed.
  int exit_code = 0;
  // The lease was lost while CMD ran (CMD was sent SIGTERM, and SIGKILL
  // after kill_after if it still ran).
  bool lease_lost = false;
};

// Spawns argv (looked up in PATH) with `env` added to distlock's environment,
// and waits for it to exit. Meanwhile SIGINT/SIGTERM/SIGHUP received by
// distlock are sent on to the child, and when `lost` is requested the child
// gets SIGTERM, then SIGKILL `kill_after` later. Returns once the child has
// exited and been reaped (never earlier), so the caller releases only then.
// Prints why when the child cannot be started or the lease is lost, unless
// quiet. Never throws.
ChildResult supervise(const std::vector<std::string>& argv,
                      const std::vector<std::pair<std::string, std::string>>& env,
                      std::stop_token lost,
                      std::chrono::milliseconds kill_after,
                      bool quiet);

}  // namespace distlock::cli
