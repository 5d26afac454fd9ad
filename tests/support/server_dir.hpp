// The life of a server fixture's process and directory, as the SQL fixtures
// (mariadb_server, postgres_server) share it: build a template data
// directory once, launch on a free port with retries, wait for readiness,
// and tear down only in the process that started the server.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/process.hpp"

namespace distlock::test {

// Returns `path` once `path + "/" + ready_file` exists, building it first if
// it does not. Building holds an exclusive flock on `path + ".lock"` (so
// parallel test binaries build it once), removes any leftover staging path
// `path + ".tmp-<pid>"`, calls `make(staging)` (the staging path does not
// exist yet) and renames the staging path to `path`. If `make` throws, the
// staging path is removed and the exception passes on. Throws
// std::system_error if the lock cannot be taken.
std::string build_template_once(const std::string& path,
                                const std::string& ready_file,
                                const std::function<void(const std::string& staging)>& make);

// Calls `probe` every `interval` until it returns true (then returns true),
// `process` is no longer running or `bound` passes (then returns false).
bool wait_until_ready(const ChildProcess& process,
                      std::chrono::milliseconds bound,
                      std::chrono::milliseconds interval,
                      const std::function<bool()>& probe);

// How launch_server starts one server.
struct ServerLaunch {
  std::string program;                   // "mariadbd", for messages
  std::vector<std::string> argv;         // what to spawn
  std::string log_path;                  // stdout and stderr, appended
  std::uint16_t port = 0;                // for messages
  std::string port_taken;                // the log text saying the port was in use
  std::chrono::seconds ready_bound{30};  // for messages: how long `ready` waits
  std::function<bool()> ready;           // waits (bounded) until the server is ready
};

// Spawns `launch.argv` into `process` and returns true once `launch.ready()`
// does. Returns false if the server exited and the log it wrote meanwhile
// holds `launch.port_taken` (the caller picks another port). Otherwise kills
// and reaps it and throws std::runtime_error saying whether it exited or was
// not ready in time, with the last 30 lines of that log.
bool launch_server(ChildProcess& process, const ServerLaunch& launch);

// For a fixture's constructor, after `dir` was made: runs `prepare`, then
// `attempt` (which picks its own free ports and returns false when they were
// taken) up to `attempts` times. Throws std::runtime_error "<program>: no
// free port after N attempts; log:\n<log_tail()>" if every attempt returns
// false. Whatever throws, `process` is killed and reaped and `dir` removed
// before the exception passes on.
void start_in_dir(const std::string& program,
                  ChildProcess& process,
                  const std::string& dir,
                  int attempts,
                  const std::function<void()>& prepare,
                  const std::function<bool()>& attempt,
                  const std::function<std::string()>& log_tail);

// For a fixture's destructor: only in the process `owner` (not in a fork()ed
// copy of the test binary), calls `stop`, kills and reaps `process` if
// `stop` throws, and removes `dir`. Never throws.
void tear_down(pid_t owner,
               ChildProcess& process,
               const std::string& dir,
               const std::function<void()>& stop) noexcept;

}  // namespace distlock::test
