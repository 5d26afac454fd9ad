#include "support/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

extern char** environ;

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno("pipe2");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// ---- Registry of live children, read from signal handlers. ----
// Signal handlers may only touch lock-free atomics, hence a fixed array.

constexpr std::size_t kMaxChildren = 1024;
static_assert(std::atomic<pid_t>::is_always_lock_free);
std::array<std::atomic<pid_t>, kMaxChildren> g_children{};

bool register_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return true;
  }
  return false;
}

// Called before the child is reaped: once reaped, its pid may be reused by an
// unrelated process that a signal handler must not kill.
void unregister_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void kill_registered_children() {
  for (auto& slot : g_children) {
    const pid_t pid = slot.load();
    if (pid > 0) ::kill(pid, SIGKILL);
  }
}

constexpr std::array<int, 5> kFatalSignals = {SIGABRT, SIGSEGV, SIGBUS, SIGTERM, SIGINT};
std::array<struct sigaction, kFatalSignals.size()> g_previous_actions{};

void on_fatal_signal(int sig, siginfo_t* info, void*) {
  kill_registered_children();
  for (std::size_t i = 0; i < kFatalSignals.size(); ++i) {
    if (kFatalSignals[i] == sig) ::sigaction(sig, &g_previous_actions[i], nullptr);
  }
  // A real fault re-executes the faulting instruction on return and reaches
  // the previous action with its true context; anything else is re-raised
  // (it stays blocked until this handler returns).
  const bool fault = (sig == SIGSEGV || sig == SIGBUS) && info != nullptr && info->si_code > 0;
  if (!fault) ::raise(sig);
}

// A fork()ed copy of the test binary (a gtest "fast" death test) starts with
// an empty registry: the parent's children are not its to kill.
void clear_registry_in_forked_child() {
  for (auto& slot : g_children) slot.store(0);
}

void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit(kill_registered_children);
    ::pthread_atfork(nullptr, nullptr, clear_registry_in_forked_child);
    for (std::size_t i = 0; i < kFatalSignals.size(); ++i) {
      struct sigaction previous {};
      ::sigaction(kFatalSignals[i], nullptr, &previous);
      // An ignored signal must stay harmless: do not kill children for it.
      if (previous.sa_handler == SIG_IGN) continue;
      g_previous_actions[i] = previous;
      struct sigaction action {};
      action.sa_sigaction = on_fatal_signal;
      action.sa_flags = SA_SIGINFO;
      sigemptyset(&action.sa_mask);
      ::sigaction(kFatalSignals[i], &action, nullptr);
    }
  });
}

// ---- The forking thread. ----
// PR_SET_PDEATHSIG fires when the thread that forked the child exits, so all
// forks happen on this thread, which lives until the process ends. It blocks
// every signal so none is handled between fork and exec in a child. A fork()ed
// copy of the test binary does not have the thread: owner() tells.

class Spawner {
 public:
  static Spawner& instance() {
    static Spawner* const spawner = new Spawner;  // leaked: outlives statics
    return *spawner;
  }

  pid_t owner() const { return owner_; }

  pid_t run(std::function<pid_t()> fork_fn) {
    std::packaged_task<pid_t()> task(std::move(fork_fn));
    std::future<pid_t> result = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(task));
    }
    cv_.notify_one();
    return result.get();
  }

 private:
  Spawner() {
    sigset_t all;
    sigset_t old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    std::thread([this] { loop(); }).detach();
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }

  [[noreturn]] void loop() {
    for (;;) {
      std::packaged_task<pid_t()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !queue_.empty(); });
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }

  const pid_t owner_ = ::getpid();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<pid_t()>> queue_;
};

// ---- What the child executes, prepared before fork. ----
// Between fork and exec only async-signal-safe calls are allowed, so every
// string and array is built here, in the parent.

std::vector<std::string> merged_environment(const EnvVars& extra) {
  std::vector<std::string> result;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text(*entry);
    bool replaced = false;
    for (const auto& [name, value] : extra) replaced |= text.rfind(name + "=", 0) == 0;
    if (!replaced) result.push_back(text);
  }
  for (const auto& [name, value] : extra) result.push_back(name + "=" + value);
  return result;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

struct ExecPlan {
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
  UniqueFd stdin_fd;
  UniqueFd output_fd;  // holds output_path open
  int stdout_fd = -1;
  int stderr_fd = -1;
};

void prepare(ExecPlan& plan, const std::vector<std::string>& argv, const SpawnOptions& options) {
  plan.argv_storage = argv;
  plan.env_storage = merged_environment(options.env);
  plan.argv = c_strings(plan.argv_storage);
  plan.envp = c_strings(plan.env_storage);
  plan.stdin_fd.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (plan.stdin_fd.get() < 0) throw_errno("open /dev/null");
  plan.stdout_fd = options.stdout_fd;
  plan.stderr_fd = options.stderr_fd;
  if (!options.output_path.empty()) {
    const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
    plan.output_fd.reset(::open(options.output_path.c_str(), flags, 0600));
    if (plan.output_fd.get() < 0) throw_errno("open " + options.output_path);
    plan.stdout_fd = plan.stderr_fd = plan.output_fd.get();
  }
}

// Runs in the forked child; never returns. Reports an exec failure by
// writing errno to error_fd (close-on-exec, so a successful exec closes it).
[[noreturn]] void exec_child(const ExecPlan& plan, pid_t parent, int error_fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl took effect: then no signal comes.
  if (::getppid() != parent) ::_exit(127);
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(plan.stdin_fd.get(), 0);
  if (plan.stdout_fd >= 0) ::dup2(plan.stdout_fd, 1);
  if (plan.stderr_fd >= 0) ::dup2(plan.stderr_fd, 2);
  // Descriptors the test binary opened without O_CLOEXEC (sockets to other
  // servers) must not stay open in the child and keep connections alive.
  if (error_fd > 3) ::close_range(3, static_cast<unsigned>(error_fd) - 1, 0);
  ::close_range(static_cast<unsigned>(error_fd) + 1, ~0U, 0);
  // glibc's execvpe searches PATH without allocating, so it is safe here.
  ::execvpe(plan.argv[0], plan.argv.data(), plan.envp.data());
  const int error = errno;
  [[maybe_unused]] const ssize_t n = ::write(error_fd, &error, sizeof error);
  ::_exit(127);
}

pid_t fork_registered(const ExecPlan& plan, int error_fd) {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) exec_child(plan, parent, error_fd);
  if (!register_child(pid)) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw std::runtime_error("too many live child processes");
  }
  return pid;
}

// True once pid has exited; does not reap it.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<decltype(left)>(left, 0, INT_MAX));
}

// Waits for the exit event through a pidfd; polls where pidfds are missing.
bool await_exit(pid_t pid, Clock::time_point deadline) {
  // glibc 2.36's <sys/pidfd.h> lacks extern "C", so call the kernel directly.
  const UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  while (!has_exited(pid)) {
    const int left = remaining_ms(deadline);
    if (left == 0) return false;
    if (pidfd.get() >= 0) {
      pollfd p{pidfd.get(), POLLIN, 0};
      ::poll(&p, 1, left);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(left, 2)));
    }
  }
  return true;
}

}  // namespace

ChildProcess::ChildProcess(pid_t pid) : pid_(pid), owner_(::getpid()) {}

ChildProcess::~ChildProcess() {
  kill_and_reap();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      owner_(other.owner_),
      status_(std::exchange(other.status_, std::nullopt)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    owner_ = other.owner_;
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv,
                                 const SpawnOptions& options) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess::spawn: empty argv");
  install_handlers_once();
  ExecPlan plan;
  prepare(plan, argv, options);
  Pipe error_pipe = make_pipe();
  const int error_fd = error_pipe.write.get();
  auto fork_fn = [&plan, error_fd] { return fork_registered(plan, error_fd); };
  Spawner& spawner = Spawner::instance();
  ChildProcess child(spawner.owner() == ::getpid() ? spawner.run(fork_fn) : fork_fn());
  error_pipe.write.reset();
  int error = 0;
  ssize_t n;
  do {
    n = ::read(error_pipe.read.get(), &error, sizeof error);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof error)) {
    child.reap();
    throw std::system_error(error, std::generic_category(), "exec " + argv[0]);
  }
  return child;
}

bool ChildProcess::running() const {
  return live() && !has_exited(pid_);
}

// A fork()ed copy of the test binary also holds this object; the child is not
// its own, so it must neither signal nor wait for it.
bool ChildProcess::live() const {
  return pid_ > 0 && !status_ && owner_ == ::getpid();
}

void ChildProcess::signal(int sig) const {
  if (!live()) throw std::logic_error("ChildProcess::signal: no live child of this process");
  if (::kill(pid_, sig) != 0) throw_errno("kill " + std::to_string(pid_));
}

std::optional<int> ChildProcess::wait_for_exit(std::chrono::milliseconds bound) {
  if (status_) return status_;
  if (!live()) throw std::logic_error("ChildProcess::wait_for_exit: no child of this process");
  if (!await_exit(pid_, Clock::now() + bound)) return std::nullopt;
  return reap();
}

bool ChildProcess::wait_for_stopped(std::chrono::milliseconds bound) const {
  if (!live()) return false;
  const auto deadline = Clock::now() + bound;
  for (;;) {
    siginfo_t info{};
    // WSTOPPED without WEXITED only ever reports a stop; it never reaps.
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WSTOPPED | WNOHANG) == 0 &&
        info.si_pid == pid_) {
      return true;
    }
    if (has_exited(pid_) || Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

int ChildProcess::kill_and_reap() noexcept {
  if (status_) return *status_;
  if (!live()) return 0;
  ::kill(pid_, SIGKILL);
  return reap();
}

int ChildProcess::reap() noexcept {
  unregister_child(pid_);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  return status;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + " (SIG" + (name ? name : "?") + ")";
  }
  return "wait status " + std::to_string(status);
}

namespace {

// Reads both pipes until both reach EOF or the deadline passes. Returns false
// on timeout.
bool drain(int out_fd, int err_fd, std::string& out, std::string& err, Clock::time_point deadline) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const int left = remaining_ms(deadline);
    if (left == 0) return false;
    if (::poll(fds, 2, left) < 0 && errno != EINTR) throw_errno("poll");
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) sinks[i]->append(buffer, static_cast<std::size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) fds[i].fd = -1;
    }
  }
  return true;
}

std::string join(const std::vector<std::string>& argv) {
  std::string result;
  for (const auto& arg : argv) result += (result.empty() ? "" : " ") + arg;
  return result;
}

}  // namespace

std::string run_capture(const std::vector<std::string>& argv,
                        std::chrono::milliseconds bound,
                        const EnvVars& env) {
  const auto deadline = Clock::now() + bound;
  Pipe out = make_pipe();
  Pipe err = make_pipe();
  SpawnOptions options;
  options.env = env;
  options.stdout_fd = out.write.get();
  options.stderr_fd = err.write.get();
  ChildProcess child = ChildProcess::spawn(argv, options);
  out.write.reset();
  err.write.reset();
  std::string stdout_text;
  std::string stderr_text;
  const bool drained = drain(out.read.get(), err.read.get(), stdout_text, stderr_text, deadline);
  const std::optional<int> status =
      drained ? child.wait_for_exit(std::chrono::milliseconds(remaining_ms(deadline)))
              : std::nullopt;
  std::string problem;
  if (!status) {
    child.kill_and_reap();
    problem = "still running after " + std::to_string(bound.count()) + " ms";
  } else if (*status != 0) {
    problem = describe_wait_status(*status);
  } else {
    return stdout_text;
  }
  throw std::runtime_error("command `" + join(argv) + "` " + problem + "\nstdout:\n" + stdout_text +
                           "\nstderr:\n" + stderr_text);
}

namespace {

// "<pid> <start time in clock ticks>" from /proc, which tells a live process
// from a later one that reused its pid; "" if there is no such process.
std::string process_identity(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const std::size_t paren = stat.rfind(')');  // the name may hold spaces
  if (paren == std::string::npos) return "";
  std::istringstream fields(stat.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {  // field 22 is starttime
  }
  return std::to_string(pid) + " " + field;
}

void remove_stale_temp_dirs(const std::string& prefix) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/tmp", ec)) {
    if (entry.path().filename().string().rfind(prefix, 0) != 0) continue;
    std::ifstream owner(entry.path() / "owner");
    std::string recorded;
    pid_t pid = 0;
    if (!std::getline(owner, recorded) || !(std::istringstream(recorded) >> pid)) continue;
    if (process_identity(pid) != recorded) std::filesystem::remove_all(entry.path(), ec);
  }
}

}  // namespace

std::string make_temp_dir(const std::string& prefix) {
  static std::mutex mu;
  static std::vector<std::string> swept;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (std::find(swept.begin(), swept.end(), prefix) == swept.end()) {
      swept.push_back(prefix);
      remove_stale_temp_dirs(prefix);
    }
  }
  std::string path = "/tmp/" + prefix + "XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) throw_errno("mkdtemp " + path);
  std::ofstream(path + "/owner") << process_identity(::getpid()) << "\n";
  return path;
}

}  // namespace distlock::test
