// distlock sem run: hold one permit of a semaphore while CMD runs.
#include <optional>

#include "distlock/error.hpp"
#include "distlock/semaphore.hpp"
#include "exit_codes.hpp"
#include "run_common.hpp"

namespace distlock::cli {

int run_semaphore(const RunOptions& o) {
  Durations d;
  if (!parse_durations(o, d) || !check_command(o)) return kExitUsage;
  if (o.permits <= 0) {
    say(false, "--permits must be a positive number");
    return kExitUsage;
  }
  int code = 0;
  auto co = client_options(o.common, code);
  if (!co) return code;
  if (co->backend != ClientOptions::Backend::redis) {
    return not_on_backend(*co, "sem run", "this backend has locks only, no semaphore");
  }
  auto client = open_client(std::move(*co), o.common.quiet, code);
  if (!client) return code;
  std::optional<Permit> permit;
  try {
    Semaphore semaphore = client->semaphore(o.name);
    semaphore.try_set_permits(o.permits);
    if (d.wait) {
      permit = semaphore.try_acquire_permit(1, *d.wait, d.lease);
    } else {
      permit = semaphore.acquire_permit(1, d.lease);
    }
  } catch (const Error& e) {
    say(o.common.quiet && exit_code_for(e.code()) != kExitUsage,
        std::string("cannot acquire a permit: ") + e.what());
    return exit_code_for(e.code());
  }
  if (!permit) return not_acquired(o);
  begin_supervision();
  const ChildResult child =
      supervise(o.command, {}, permit->stop_token(), d.kill_after, o.common.quiet);
  std::error_code release_ec;
  permit->release(release_ec);
  return finish(child, release_ec, o);
}

}  // namespace distlock::cli
