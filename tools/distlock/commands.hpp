// The distlock subcommands, each a function returning the exit code; main.cpp
// parses the command line into these option structs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common.hpp"

namespace distlock::cli {

// `distlock run` and `distlock sem run`.
struct RunOptions {
  CommonOptions common;
  std::string name;
  // Durations as text (parsed by the command): empty --wait is forever.
  std::string wait;
  std::string lease;
  std::string kill_after = "10s";
  bool fair = false;
  bool fenced = false;
  // --lock-delay as text (empty or 0: none).
  std::string lock_delay;
  // --redlock URI,URI,...: the group of independent masters (redlock_given
  // even when the list is empty).
  std::string redlock;
  bool redlock_given = false;
  // Replaces kExitNotAcquired when set (>= 0).
  int conflict_exit_code = -1;
  // sem run: the permits to set when the semaphore has none yet.
  std::int64_t permits = 0;
  std::vector<std::string> command;
};

int run_lock(const RunOptions& options);
int run_semaphore(const RunOptions& options);
// run --redlock: a RedlockLock of the group instead of a Lock.
int run_redlock(const RunOptions& options);

// status / list / force-unlock / top.
struct InspectOptions {
  CommonOptions common;
  std::string name;  // status, force-unlock
  std::string pattern = "*";
  bool json = false;
  bool yes = false;
  std::string interval = "1s";  // top
  // status --redlock URI,URI,...: as RunOptions.
  std::string redlock;
  bool redlock_given = false;
};

int status_command(const InspectOptions& options);
// status --redlock: NAME's key on every node of the group.
int redlock_status_command(const InspectOptions& options);
int list_command(const InspectOptions& options);
int force_unlock_command(const InspectOptions& options);
int top_command(const InspectOptions& options);

}  // namespace distlock::cli
