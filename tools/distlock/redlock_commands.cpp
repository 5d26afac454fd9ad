// distlock run --redlock and status --redlock: a lock held on a majority of
// independent masters (docs/redlock.md).
#include <future>
#include <iostream>

#include "commands.hpp"
#include "distlock/error.hpp"
#include "distlock/redlock.hpp"
#include "exit_codes.hpp"
#include "net/uri_text.hpp"
#include "redlock_nodes.hpp"
#include "redlock_status.hpp"
#include "run_common.hpp"

namespace distlock::cli {
namespace {

// The group's options from the common ones: --watchdog is the group's lease.
bool group_options(const CommonOptions& common, RedlockOptions& out) {
  std::optional<std::chrono::milliseconds> watchdog;
  if (!parse_duration_option("--watchdog", common.watchdog, watchdog)) return false;
  if (watchdog) out.lease = *watchdog;
  return true;
}

// Checks what can be checked before any I/O; prints why not.
std::optional<RedlockNodes> checked_run(const RunOptions& o, Durations& d, RedlockOptions& ro) {
  if (o.fair || o.fenced) {
    say(false, std::string(o.fenced ? "--fenced" : "--fair") +
                   " cannot be used with --redlock: a Redlock group has no fencing token and "
                   "no queue (docs/redlock.md says what to use instead)");
    return std::nullopt;
  }
  if (!o.lock_delay.empty()) {
    say(false,
        "--lock-delay cannot be used with --redlock: a Redlock group has no lock-delay "
        "(docs/redlock.md)");
    return std::nullopt;
  }
  if (!parse_durations(o, d) || !check_command(o) || !group_options(o.common, ro)) {
    return std::nullopt;
  }
  std::string error;
  auto nodes = parse_redlock_nodes(o.redlock, error);
  if (!nodes) say(false, error);
  return nodes;
}

// Holds the lock of `group` while CMD runs; the exit code.
int hold_and_run(RedlockGroup& group, const RunOptions& o, const Durations& d) {
  std::error_code ec;
  RedlockLock lock = group.lock(o.name);
  auto lease = acquire_as(lock, d, ec);
  if (ec) {
    say(o.common.quiet && exit_code_for(ec) != kExitUsage, "cannot lock: " + ec.message());
    return exit_code_for(ec);
  }
  if (!lease) return not_acquired(o);
  // No DISTLOCK_FENCING_TOKEN: Redlock has none.
  const ChildResult child =
      supervise(o.command, {}, lease->stop_token(), d.kill_after, o.common.quiet);
  std::error_code release_ec;
  lease->release(release_ec);
  return finish(child, release_ec, o);
}

}  // namespace

int run_redlock(const RunOptions& o) {
  Durations d;
  RedlockOptions ro;
  const auto nodes = checked_run(o, d, ro);
  if (!nodes) return kExitUsage;
  try {
    // Unreachable nodes are no error: they vote against every attempt.
    RedlockGroup group(nodes->uris, ro);
    return hold_and_run(group, o, d);
  } catch (const Error& e) {
    // The group's and the lock's messages never contain a password.
    const int code = exit_code_for(e.code());
    say(o.common.quiet && code != kExitUsage, std::string("cannot lock: ") + e.what());
    return code;
  }
}

namespace {

// How long status waits for one node: a node that is down or paused is
// reported, not waited for.
constexpr std::chrono::milliseconds kNodeTimeout{1000};

NodeReport read_node(ClientOptions options, const std::string& address, const std::string& name) {
  NodeReport n;
  n.address = address;
  const std::string password = options.password;
  options.client_name = "distlock-cli";
  options.connect_timeout = std::min(options.connect_timeout, kNodeTimeout);
  options.command_timeout = std::min(options.command_timeout, kNodeTimeout);
  try {
    Client client(std::move(options));
    n.type = client.command("TYPE", name).as_string();
    n.exists = n.type != "none";
    if (n.exists) {
      const auto ttl = client.command("PTTL", name).as_integer();
      if (ttl != -2) n.ttl_ms = ttl;
    }
    if (n.type == "string") {
      const Value v = client.command("GET", name);
      if (v.is_string()) n.token = v.as_string();
    }
    n.reachable = true;
  } catch (const Error& e) {
    n = NodeReport{};
    n.address = address;
    n.error = e.what();
    uri_text::replace_all(n.error, password);
  }
  return n;
}

}  // namespace

int redlock_status_command(const InspectOptions& o) {
  std::string error;
  const auto nodes = parse_redlock_nodes(o.redlock, error);
  if (!nodes) {
    say(false, error);
    return kExitUsage;
  }
  // Every node at once: a dead node costs one timeout, not one per node.
  std::vector<std::future<NodeReport>> pending;
  for (std::size_t i = 0; i < nodes->options.size(); ++i) {
    pending.push_back(
        std::async(std::launch::async, read_node, nodes->options[i], nodes->addresses[i], o.name));
  }
  std::vector<NodeReport> reports;
  for (auto& p : pending) reports.push_back(p.get());
  const RedlockStatus s = summarize(o.name, std::move(reports));
  std::cout << (o.json ? to_json(s) + "\n" : to_text(s)) << std::flush;
  if (s.state != "unknown") return 0;
  say(o.common.quiet, "too many nodes unreachable to tell whether '" + o.name + "' is locked");
  return kExitUnavailable;
}

}  // namespace distlock::cli
