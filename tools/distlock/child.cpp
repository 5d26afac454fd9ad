#include "child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common.hpp"
#include "exit_codes.hpp"

extern char** environ;

namespace distlock::cli {
namespace {

// The self-pipe: signal handlers and the lease-lost callback write one byte
// each (a signal number, or kLostByte); supervise() polls the read end.
int g_pipe[2] = {-1, -1};
std::atomic<bool> g_supervising{false};
constexpr unsigned char kLostByte = 0xff;

void on_signal(int signo) {
  if (signo != SIGCHLD && !g_supervising.load()) _exit(kExitSignalBase + signo);
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(signo);
  [[maybe_unused]] const auto n = write(g_pipe[1], &byte, 1);
  errno = saved;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return kExitSignalBase + WTERMSIG(status);
  return kExitSignalBase;
}

// The child's environment: distlock's, with `env` set (replacing any
// variable of the same name).
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    bool replaced = false;
    for (const auto& [name, value] : env) replaced |= entry.rfind(name + "=", 0) == 0;
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Waits for the pipe (or at most `bound`) and returns the bytes that came.
std::string wait_for_events(std::chrono::milliseconds bound) {
  pollfd fd{g_pipe[0], POLLIN, 0};
  const int r = poll(&fd, 1, static_cast<int>(bound.count()));
  std::string bytes;
  if (r <= 0) return bytes;
  char buffer[64];
  ssize_t n = 0;
  while ((n = read(g_pipe[0], buffer, sizeof buffer)) > 0) bytes.append(buffer, buffer + n);
  return bytes;
}

}  // namespace

void install_signal_handlers() {
  if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: the library's threads must not see EINTR from our signals.
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaction(signo, &action, nullptr);
}

void begin_supervision() {
  g_supervising.store(true);
}

namespace {

// Starts argv with `env` added; the pid, or -1 with `err` set (errno value).
pid_t spawn(const std::vector<std::string>& argv,
            const std::vector<std::pair<std::string, std::string>>& env,
            int& err) {
  std::vector<std::string> args = argv;
  std::vector<std::string> environment = child_environment(env);
  auto arg_ptrs = pointers(args);
  auto env_ptrs = pointers(environment);
  pid_t pid = -1;
  err = posix_spawnp(&pid, arg_ptrs[0], nullptr, nullptr, arg_ptrs.data(), env_ptrs.data());
  return err == 0 ? pid : -1;
}

// The running child: what to do on each event until it has been reaped.
class Supervisor {
 public:
  Supervisor(pid_t pid, std::string name, std::chrono::milliseconds kill_after, bool quiet)
      : pid_(pid), name_(std::move(name)), kill_after_(kill_after), quiet_(quiet) {}

  // One byte from the self-pipe: a signal for distlock, or kLostByte.
  void on_event(unsigned char byte) {
    if (byte == kLostByte) {
      on_lost();
    } else if (byte == SIGINT || byte == SIGTERM || byte == SIGHUP) {
      kill(pid_, byte);
    }
  }
  // The lease is lost: SIGTERM now, SIGKILL kill_after later (once).
  void on_lost() {
    if (result_.lease_lost) return;
    result_.lease_lost = true;
    say(quiet_, "lease lost: sending SIGTERM to " + name_);
    kill(pid_, SIGTERM);
    kill_at_ = std::chrono::steady_clock::now() + kill_after_;
  }
  // Sends the SIGKILL when due; true once the child has exited (reaped).
  bool poll_child() {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      result_.exit_code = r == pid_ ? exit_code_of(status) : kExitSignalBase;
      return true;
    }
    if (std::chrono::steady_clock::now() >= kill_at_) {
      say(quiet_, name_ + " still running after --kill-after: sending SIGKILL");
      kill(pid_, SIGKILL);
      kill_at_ = std::chrono::steady_clock::time_point::max();
    }
    return false;
  }
  const ChildResult& result() const { return result_; }

 private:
  const pid_t pid_;
  const std::string name_;
  const std::chrono::milliseconds kill_after_;
  const bool quiet_;
  ChildResult result_;
  // When to send SIGKILL after a lost lease; max(): not scheduled.
  std::chrono::steady_clock::time_point kill_at_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace

ChildResult supervise(const std::vector<std::string>& argv,
                      const std::vector<std::pair<std::string, std::string>>& env,
                      std::stop_token lost,
                      std::chrono::milliseconds kill_after,
                      bool quiet) {
  begin_supervision();
  int err = 0;
  const pid_t pid = spawn(argv, env, err);
  if (pid < 0) {
    say(quiet, "cannot run " + argv[0] + ": " + std::strerror(err));
    return {err == ENOENT ? kExitNotFound : kExitCannotExecute, false};
  }
  // Runs on the Client's I/O thread the moment the lease is lost (or here, at
  // once, if it already was): wake the loop below.
  std::stop_callback on_lost(lost, [] {
    const unsigned char byte = kLostByte;
    [[maybe_unused]] const auto n = write(g_pipe[1], &byte, 1);
  });
  Supervisor child(pid, argv[0], kill_after, quiet);
  for (;;) {
    // The poll bound is a safety net only: a SIGCHLD that came before the
    // pid was known, or a wake-up byte lost to a full pipe, is still noticed.
    for (const unsigned char byte : wait_for_events(std::chrono::milliseconds(200))) {
      child.on_event(byte);
    }
    if (lost.stop_requested()) child.on_lost();
    if (child.poll_child()) return child.result();
  }
}

}  // namespace distlock::cli
