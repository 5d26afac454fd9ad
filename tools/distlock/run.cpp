// distlock run: hold a lock while CMD runs.
#include <optional>

#include "distlock/error.hpp"
#include "distlock/lease.hpp"
#include "distlock/lock.hpp"
#include "distlock/lock_options.hpp"
#include "exit_codes.hpp"
#include "run_common.hpp"

namespace distlock::cli {
namespace {

Lock lock_handle(Client& client, const RunOptions& o, const LockOptions& options) {
  if (o.fair) {
    return o.fenced ? client.fenced_fair_lock(o.name, options) : client.fair_lock(o.name, options);
  }
  return o.fenced ? client.fenced_lock(o.name, options) : client.lock(o.name, options);
}

}  // namespace

int run_lock(const RunOptions& o) {
  Durations d;
  std::optional<std::chrono::milliseconds> delay;
  if (!parse_durations(o, d) || !parse_duration_option("--lock-delay", o.lock_delay, delay) ||
      !check_command(o)) {
    return kExitUsage;
  }
  const LockOptions options{delay.value_or(std::chrono::milliseconds(0))};
  int code = 0;
  auto client = connect(o.common, code);
  if (!client) return code;
  std::error_code ec;
  std::string why;
  std::optional<Lease> lease;
  try {
    Lock lock = lock_handle(*client, o, options);
    lease = acquire_as(lock, d, ec);
  } catch (const Error& e) {
    ec = e.code();
    why = e.what();
  }
  if (ec) {
    say(o.common.quiet && exit_code_for(ec) != kExitUsage,
        "cannot lock: " + (why.empty() ? ec.message() : why));
    return exit_code_for(ec);
  }
  if (!lease) return not_acquired(o);
  begin_supervision();
  std::vector<std::pair<std::string, std::string>> env;
  if (const auto token = lease->fencing_token()) {
    env.emplace_back("DISTLOCK_FENCING_TOKEN", std::to_string(*token));
  }
  const ChildResult child =
      supervise(o.command, env, lease->stop_token(), d.kill_after, o.common.quiet);
  std::error_code release_ec;
  lease->release(release_ec);
  return finish(child, release_ec, o);
}

}  // namespace distlock::cli
