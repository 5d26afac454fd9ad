// distlock run: hold a lock while CMD runs.
#include <memory>
#include <optional>
#include <stop_token>

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

// What `run` asks for that a ZooKeeper lock has not: false (after the
// message) for any of it, before any I/O.
bool zookeeper_can_run(const ClientOptions& co,
                       const RunOptions& o,
                       const Durations& d,
                       const std::optional<std::chrono::milliseconds>& delay) {
  if (o.fair) {
    not_on_backend(co, "--fair",
                   "a ZooKeeper lock is a queue already, first come first served: drop --fair");
    return false;
  }
  if (d.lease) {
    not_on_backend(co, "--lease",
                   "a ZooKeeper lock is held by the session, not for a fixed lease; its "
                   "timeout is ?session_timeout_ms= in the URI");
    return false;
  }
  if (delay && delay->count() > 0) {
    not_on_backend(co, "--lock-delay",
                   "a holder's lock node goes with its session and the next in the queue "
                   "holds at once");
    return false;
  }
  return true;
}

// The same for MySQL/MariaDB's GET_LOCK and PostgreSQL's advisory locks,
// which the server holds for the connection that took them (the library
// refuses these too, but only once connected).
bool sql_can_run(const ClientOptions& co,
                 const RunOptions& o,
                 const Durations& d,
                 const std::optional<std::chrono::milliseconds>& delay) {
  if (o.fair) {
    not_on_backend(co, "--fair",
                   "no fair lock: the server hands a free lock to its waiters in its own order");
    return false;
  }
  if (d.lease) {
    not_on_backend(co, "--lease",
                   "a lock is held by its connection, not for a fixed lease: it ends when the "
                   "connection does");
    return false;
  }
  if (delay && delay->count() > 0) {
    not_on_backend(co, "--lock-delay",
                   "the server frees a lock the moment its holder's connection ends");
    return false;
  }
  return true;
}

bool backend_can_run(const ClientOptions& co,
                     const RunOptions& o,
                     const Durations& d,
                     const std::optional<std::chrono::milliseconds>& delay) {
  if (is_zookeeper(co)) return zookeeper_can_run(co, o, d, delay);
  if (is_sql(co)) return sql_can_run(co, o, d, delay);
  return true;
}

// ZooKeeper: `run` treats the lock as lost as soon as it is uncertain (the
// connection dropped, LeaseLostEvent::Reason::suspended), not only once it
// is declared lost. From the drop on the ensemble may expire the session
// (as early as a third of the session timeout later) without a cut-off
// client hearing of it; SIGTERM at the drop gives CMD that time to wind
// down before anyone else can hold the lock (docs/cli.md, "ZooKeeper").
// `uncertain` is requested by the Client's on_lease_lost, on its I/O thread.
void on_suspended_stop(ClientOptions& co,
                       const std::shared_ptr<std::stop_source>& uncertain,
                       bool quiet) {
  co.on_lease_lost = [uncertain, quiet](const LeaseLostEvent& e) {
    if (e.reason != LeaseLostEvent::Reason::suspended) return;
    say(quiet, "the connection to ZooKeeper dropped: '" + e.name +
                   "' is uncertain (the session may expire); treating it as lost");
    uncertain->request_stop();
  };
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
  auto co = client_options(o.common, code);
  if (!co) return code;
  if (!backend_can_run(*co, o, d, delay)) return kExitUsage;
  const bool zookeeper = is_zookeeper(*co);
  const auto uncertain = std::make_shared<std::stop_source>();
  if (zookeeper) on_suspended_stop(*co, uncertain, o.common.quiet);
  auto client = open_client(std::move(*co), o.common.quiet, code);
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
  // Lost: the lease's own loss (Redis; ZooKeeper's expired and taken; the
  // holding's connection ended on MySQL/PostgreSQL), or, with ZooKeeper,
  // uncertain (on_suspended_stop).
  std::stop_source lost;
  const std::stop_callback lease_lost(lease->stop_token(), [&lost] { lost.request_stop(); });
  const std::stop_callback suspended(uncertain->get_token(), [&lost] { lost.request_stop(); });
  // Acquired while the connection was already down: no event comes for it.
  if (zookeeper && !lease->valid()) {
    say(o.common.quiet, "the connection to ZooKeeper dropped: '" + o.name +
                            "' is uncertain (the session may expire); treating it as lost");
    lost.request_stop();
  }
  const ChildResult child =
      supervise(o.command, env, lost.get_token(), d.kill_after, o.common.quiet);
  std::error_code release_ec;
  lease->release(release_ec);
  return finish(child, release_ec, o);
}

}  // namespace distlock::cli
