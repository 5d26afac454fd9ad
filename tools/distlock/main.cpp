// distlock: run commands under a distributed lock or semaphore, and inspect
// the locks on a Redis server, a ZooKeeper ensemble, or a MySQL/MariaDB or
// PostgreSQL server. docs/cli.md is the manual; exit_codes.hpp
// the exit codes.
#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "child.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"

namespace {

using distlock::cli::CommonOptions;
using distlock::cli::InspectOptions;
using distlock::cli::RunOptions;

void add_common(CLI::App& app, CommonOptions& o) {
  app.add_option("--uri", o.uri,
                 "Redis, zookeeper://, mysql:// or postgresql:// URI (default: $DISTLOCK_URI, "
                 "$REDIS_URL, "
                 "redis://127.0.0.1:6379)");
  app.add_option("--watchdog", o.watchdog,
                 "watchdog lease, renewed every third of it (default 30s; Redis only)");
  app.add_flag("-q,--quiet", o.quiet, "no messages from distlock itself on stderr");
}

void add_run_options(CLI::App& app, RunOptions& o) {
  add_common(app, o.common);
  app.add_option("NAME", o.name, "lock name")->required();
  app.add_option("-w,--wait", o.wait, "wait at most this long (default: forever; 0: try once)");
  app.add_option("-l,--lease", o.lease, "fixed lease, no watchdog (e.g. 30s)");
  app.add_option("-E,--conflict-exit-code", o.conflict_exit_code,
                 "exit code when not acquired (default 75)")
      ->check(CLI::Range(0, 255));
  app.add_option("--kill-after", o.kill_after,
                 "after a lost lease, SIGKILL the command this long after SIGTERM (default 10s)");
}

// Splits "... -- CMD ARGS" at the first "--": CMD and its arguments are
// never parsed as distlock options.
std::vector<std::string> split_command(int& argc, char** argv) {
  std::vector<std::string> command;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") != 0) continue;
    for (int j = i + 1; j < argc; ++j) command.emplace_back(argv[j]);
    argc = i;
    break;
  }
  return command;
}

// The parsed command line: every subcommand's options, and which one ran.
struct Commands {
  RunOptions run, sem;
  InspectOptions in;
  CLI::App* run_cmd = nullptr;
  CLI::App* sem_run = nullptr;
  CLI::App* status = nullptr;
  CLI::App* list = nullptr;
  CLI::App* force = nullptr;
  CLI::App* top = nullptr;
  CLI::Option* run_redlock = nullptr;
  CLI::Option* status_redlock = nullptr;
};

constexpr const char* kRedlockHelp =
    "a Redlock held on a majority of these independent masters (URI,URI,...; a comma inside "
    "a URI is %2C) instead of a lock on --uri; no fencing token, so not with --fair or "
    "--fenced";

void define_run_commands(CLI::App& app, Commands& c) {
  c.run_cmd = app.add_subcommand("run", "run CMD while holding the lock NAME");
  add_run_options(*c.run_cmd, c.run);
  c.run_cmd->add_flag("--fair", c.run.fair, "first come, first served (a fair lock)");
  c.run_cmd->add_flag("--fenced", c.run.fenced, "pass a fencing token in $DISTLOCK_FENCING_TOKEN");
  c.run_cmd->add_option("--lock-delay", c.run.lock_delay,
                        "when a holder's lease ends without a release, nobody gets NAME for "
                        "this long after (e.g. 15s; default 0, off)");
  c.run_redlock =
      c.run_cmd->add_option("--redlock", c.run.redlock, kRedlockHelp)->excludes("--uri");
  auto* sem = app.add_subcommand("sem", "semaphores")->require_subcommand(1);
  c.sem_run = sem->add_subcommand("run", "run CMD while holding one permit of NAME");
  add_run_options(*c.sem_run, c.sem);
  c.sem_run->add_option("-n,--permits", c.sem.permits, "permits, set when the semaphore has none")
      ->required();
}

void define_inspect_commands(CLI::App& app, Commands& c) {
  InspectOptions& in = c.in;
  c.status = app.add_subcommand("status", "show who holds NAME");
  c.list = app.add_subcommand("list", "list locks and synchronizers (SCAN)");
  c.force = app.add_subcommand("force-unlock", "delete the lock NAME, whoever holds it");
  c.top = app.add_subcommand("top", "live table of locks; q quits");
  for (auto* sub : {c.status, c.list, c.force, c.top}) add_common(*sub, in.common);
  for (auto* sub : {c.status, c.list, c.force})
    sub->add_flag("--json", in.json, "one JSON document");
  c.status->add_option("NAME", in.name, "name")->required();
  c.status_redlock =
      c.status
          ->add_option("--redlock", in.redlock,
                       "NAME's key on each of these masters (comma-separated URIs) and "
                       "whether a majority holds it; excludes --uri")
          ->excludes("--uri");
  c.force->add_option("NAME", in.name, "lock name")->required();
  c.force->add_flag("-y,--yes", in.yes, "really delete it");
  c.list->add_option("PATTERN", in.pattern, "SCAN MATCH pattern (default *)");
  c.top->add_option("PATTERN", in.pattern, "SCAN MATCH pattern (default *)");
  c.top->add_option("-i,--interval", in.interval, "refresh period (default 1s)");
}

int dispatch(Commands& c, const std::vector<std::string>& command) {
  using namespace distlock::cli;
  if (!c.run_cmd->parsed() && !c.sem_run->parsed() && !command.empty()) {
    std::cerr << "distlock: '--' and a command are only for run and sem run\n";
    return kExitUsage;
  }
  c.run.command = command;
  c.sem.command = command;
  c.run.redlock_given = c.run_redlock->count() > 0;
  c.in.redlock_given = c.status_redlock->count() > 0;
  if (c.run_cmd->parsed()) return c.run.redlock_given ? run_redlock(c.run) : run_lock(c.run);
  if (c.sem_run->parsed()) return run_semaphore(c.sem);
  if (c.status->parsed()) {
    return c.in.redlock_given ? redlock_status_command(c.in) : status_command(c.in);
  }
  if (c.list->parsed()) return list_command(c.in);
  if (c.force->parsed()) return force_unlock_command(c.in);
  return top_command(c.in);
}

}  // namespace

int main(int argc, char** argv) {
  distlock::cli::install_signal_handlers();
  const std::vector<std::string> command = split_command(argc, argv);
  CLI::App app{
      "distlock: distributed locks on Redis, ZooKeeper, MySQL or PostgreSQL for shell commands",
      "distlock"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "distlock " DISTLOCK_VERSION);
  Commands commands;
  define_run_commands(app, commands);
  define_inspect_commands(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every parse error is bad usage.
    return app.exit(e) == 0 ? 0 : distlock::cli::kExitUsage;
  }
  return dispatch(commands, command);
}
