// distlock run: hold a lock while CMD runs.
#include <optional>

#include "distlock/error.hpp"
#include "distlock/lease.hpp"
#include "distlock/lock.hpp"
#include "exit_codes.hpp"
#include "run_common.hpp"

namespace distlock::cli {
namespace {

Lock lock_handle(Client& client, const RunOptions& o) {
  if (o.fair) return o.fenced ? client.fenced_fair_lock(o.name) : client.fair_lock(o.name);
  return o.fenced ? client.fenced_lock(o.name) : client.lock(o.name);
}

}  // namespace

int run_lock(const RunOptions& o) {
  Durations d;
  if (!parse_durations(o, d) || !check_command(o)) return kExitUsage;
  int code = 0;
  auto client = connect(o.common, code);
  if (!client) return code;
  std::error_code ec;
  std::optional<Lease> lease;
  try {
    Lock lock = lock_handle(*client, o);
    lease = acquire_as(lock, d, ec);
  } catch (const Error& e) {
    ec = e.code();
  }
  if (ec) {
    say(o.common.quiet && exit_code_for(ec) != kExitUsage, "cannot lock: " + ec.message());
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
