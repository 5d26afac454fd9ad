// run_common.hpp's helpers, shared by run and sem run.
#include "run_common.hpp"

#include "distlock/error.hpp"
#include "exit_codes.hpp"

namespace distlock::cli {

bool parse_durations(const RunOptions& o, Durations& out) {
  std::optional<std::chrono::milliseconds> kill_after;
  if (!parse_duration_option("--wait", o.wait, out.wait) ||
      !parse_duration_option("--lease", o.lease, out.lease) ||
      !parse_duration_option("--kill-after", o.kill_after, kill_after)) {
    return false;
  }
  if (out.lease && out.lease->count() == 0) {
    say(false, "--lease must be positive");
    return false;
  }
  if (kill_after) out.kill_after = *kill_after;
  return true;
}

bool check_command(const RunOptions& o) {
  if (!o.command.empty()) return true;
  say(false, "missing the command: distlock run NAME [options] -- CMD [ARGS...]");
  return false;
}

int not_acquired(const RunOptions& o) {
  say(o.common.quiet, "'" + o.name + "' not acquired within --wait");
  return o.conflict_exit_code >= 0 ? o.conflict_exit_code : kExitNotAcquired;
}

// The exit code once CMD has finished and the holding was released.
int finish(const ChildResult& child, const std::error_code& release_ec, const RunOptions& o) {
  if (child.lease_lost || release_ec == make_error_code(errc::lease_lost)) {
    if (!child.lease_lost) say(o.common.quiet, "lease lost while the command ran");
    return kExitLeaseLost;
  }
  if (release_ec)
    say(o.common.quiet,
        "release not confirmed (" + release_ec.message() + "); the lease expires by itself");
  return child.exit_code;
}

}  // namespace distlock::cli
