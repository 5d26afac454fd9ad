// Child processes for tests: spawned with fork/exec, reaped by pid, and never
// left behind when the test binary dies.
//
// Three layers keep a child from outliving the test binary:
//   - ~ChildProcess() kills (SIGKILL) and reaps a child that is still running;
//   - a process-wide registry of live children is SIGKILLed from an atexit
//     handler and from handlers for SIGABRT, SIGSEGV, SIGBUS, SIGTERM and
//     SIGINT (which then re-raise the signal with its previous action);
//   - every child has PR_SET_PDEATHSIG = SIGKILL, which covers SIGKILL of the
//     test binary (ctest timeouts) where no handler can run. Children are
//     forked from one internal thread that lives as long as the process,
//     because the kernel sends the death signal when the *forking thread*
//     exits: a server started from a short-lived std::thread would otherwise
//     die with that thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace distlock::test {

using EnvVars = std::vector<std::pair<std::string, std::string>>;

struct SpawnOptions {
  // Variables added to the child's environment, replacing any inherited
  // variable of the same name. Default: none (the parent's environment).
  EnvVars env;
  // When non-empty, the child's stdout and stderr are appended to this file,
  // which is created (mode 0600) if missing. Default: empty.
  std::string output_path;
  // Used only when output_path is empty: when >= 0, the child's stdout
  // (stderr) is redirected to this descriptor. The caller keeps ownership.
  // Default: -1, inherited from the test binary.
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// One child process. Movable, not copyable. Not thread-safe: use one object
// from one thread at a time. In a fork()ed copy of the test binary (a gtest
// "fast" death test) an object inherited from the parent is inert: it never
// signals, waits for or kills the parent's child.
class ChildProcess {
 public:
  // An empty object: pid() is -1 and running() is false.
  ChildProcess() = default;
  // Kills (SIGKILL) and reaps the child if it has not been reaped yet.
  ~ChildProcess();

  ChildProcess(ChildProcess&& other) noexcept;
  // Kills and reaps the child this object held, then takes other's.
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (looked up in PATH unless it contains a '/') with
  // arguments argv[1..]. stdin is /dev/null; descriptors other than 0-2 are
  // not inherited. Returns once the program has been exec'ed.
  // Throws std::invalid_argument for an empty argv, and std::system_error
  // when fork, exec (for example ENOENT: not found) or opening output_path
  // fails.
  static ChildProcess spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

  // The child's pid, kept after it has been reaped; -1 for an empty object.
  pid_t pid() const { return pid_; }

  // True while the child has been spawned and has not exited (false for an
  // inert object). A stopped (SIGSTOP) child is running.
  bool running() const;

  // Sends sig to the child. Precondition: spawned and not reaped (so the pid
  // cannot belong to another process), not inert. Throws std::logic_error
  // otherwise.
  void signal(int sig) const;

  // Waits at most bound for the child to exit; when it has, reaps it and
  // returns its wait status (decode with WIFEXITED & co., or
  // describe_wait_status). Returns std::nullopt if it is still running after
  // bound. Once reaped, returns the same status at once on every call.
  // Throws std::logic_error for an empty or inert object.
  std::optional<int> wait_for_exit(std::chrono::milliseconds bound);

  // Waits at most bound until the child is stopped (after SIGSTOP). Returns
  // false if it did not stop in time or has exited.
  bool wait_for_stopped(std::chrono::milliseconds bound) const;

  // Sends SIGKILL unless already reaped, reaps, and returns the wait status.
  // Does nothing for an empty or inert object (returns 0).
  int kill_and_reap() noexcept;

 private:
  explicit ChildProcess(pid_t pid);
  bool live() const;
  int reap() noexcept;

  pid_t pid_ = -1;
  pid_t owner_ = -1;           // the process that spawned it
  std::optional<int> status_;  // set once reaped
};

// "exited with status N" or "killed by signal N (NAME)".
std::string describe_wait_status(int status);

// Runs argv to completion, with env added to the environment, and returns
// what it wrote to stdout. Throws std::runtime_error carrying the command,
// its stdout and stderr when it exits with a non-zero status or is still
// running after bound (it is then killed and reaped).
std::string run_capture(const std::vector<std::string>& argv,
                        std::chrono::milliseconds bound,
                        const EnvVars& env = {});

// Creates a fresh directory /tmp/<prefix>XXXXXX (mkdtemp) holding a file
// "owner" that names this process, and returns its absolute path. The first
// call in a process first removes /tmp/<prefix>* directories whose owner
// process is gone: test binaries that died without running destructors
// (SIGKILL, abort) cannot remove their own. Directories without an owner file
// are never touched. Throws std::system_error if mkdtemp fails.
std::string make_temp_dir(const std::string& prefix);

}  // namespace distlock::test
