// distlock: run commands under a distributed lock or semaphore, and inspect
// the locks on a Redis server. docs/cli.md is the manual; exit_codes.hpp the
// exit codes.
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
                 "Redis URI (default: $DISTLOCK_URI, $REDIS_URL, redis://127.0.0.1:6379)");
  app.add_option("--watchdog", o.watchdog,
                 "watchdog lease, renewed every third of it (default 30s)");
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

}  // namespace

int main(int argc, char** argv) {
  distlock::cli::install_signal_handlers();
  std::vector<std::string> command = split_command(argc, argv);
  CLI::App app{"distlock: distributed locks on Redis for shell commands", "distlock"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "distlock 0.1.0");

  RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "run CMD while holding the lock NAME");
  add_run_options(*run_cmd, run);
  run_cmd->add_flag("--fair", run.fair, "first come, first served (a fair lock)");
  run_cmd->add_flag("--fenced", run.fenced, "pass a fencing token in $DISTLOCK_FENCING_TOKEN");

  RunOptions sem;
  auto* sem_cmd = app.add_subcommand("sem", "semaphores")->require_subcommand(1);
  auto* sem_run = sem_cmd->add_subcommand("run", "run CMD while holding one permit of NAME");
  add_run_options(*sem_run, sem);
  sem_run->add_option("-n,--permits", sem.permits, "permits, set when the semaphore has none")
      ->required();

  InspectOptions in;
  auto* status = app.add_subcommand("status", "show who holds NAME");
  auto* list = app.add_subcommand("list", "list locks and synchronizers (SCAN)");
  auto* force = app.add_subcommand("force-unlock", "delete the lock NAME, whoever holds it");
  auto* top = app.add_subcommand("top", "live table of locks; q quits");
  for (auto* sub : {status, list, force, top}) add_common(*sub, in.common);
  for (auto* sub : {status, list, force}) sub->add_flag("--json", in.json, "one JSON document");
  status->add_option("NAME", in.name, "name")->required();
  force->add_option("NAME", in.name, "lock name")->required();
  force->add_flag("-y,--yes", in.yes, "really delete it");
  list->add_option("PATTERN", in.pattern, "SCAN MATCH pattern (default *)");
  top->add_option("PATTERN", in.pattern, "SCAN MATCH pattern (default *)");
  top->add_option("-i,--interval", in.interval, "refresh period (default 1s)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : distlock::cli::kExitUsage;
  }
  if (!run_cmd->parsed() && !sem_run->parsed() && !command.empty()) {
    std::cerr << "distlock: '--' and a command are only for run and sem run\n";
    return distlock::cli::kExitUsage;
  }
  run.command = command;
  sem.command = command;
  if (run_cmd->parsed()) return distlock::cli::run_lock(run);
  if (sem_run->parsed()) return distlock::cli::run_semaphore(sem);
  if (status->parsed()) return distlock::cli::status_command(in);
  if (list->parsed()) return distlock::cli::list_command(in);
  if (force->parsed()) return distlock::cli::force_unlock_command(in);
  return distlock::cli::top_command(in);
}
