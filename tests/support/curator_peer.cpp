#include "support/curator_peer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "support/fixture_io.hpp"

// Set by tests/CMakeLists.txt: the directory javac wrote CuratorPeer.class to
// ("" when javac or a jar was missing at configure time), the jars it needs
// at run time joined by ':', and the java that runs it.
#ifndef DISTLOCK_CURATOR_CLASSES
#define DISTLOCK_CURATOR_CLASSES ""
#endif
#ifndef DISTLOCK_CURATOR_CLASSPATH
#define DISTLOCK_CURATOR_CLASSPATH ""
#endif
#ifndef DISTLOCK_CURATOR_JAVA
#define DISTLOCK_CURATOR_JAVA ""
#endif

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kPackages =
    "install the Debian packages libcurator-recipes-java and default-jdk-headless "
    "(scripts/setup.sh does), then re-run cmake and build so that javac compiles "
    "tests/interop/curator/CuratorPeer.java";

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

bool starts_with(const std::string& line, std::string_view prefix) {
  return line.size() >= prefix.size() && line.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

std::string curator_peer_missing() {
  const std::string java = DISTLOCK_CURATOR_JAVA;
  const std::string classes = DISTLOCK_CURATOR_CLASSES;
  std::string missing;
  if (java.empty() || ::access(java.c_str(), X_OK) != 0) {
    missing += "java (" + (java.empty() ? std::string("not found by cmake") : java) + "); ";
  }
  if (classes.empty()) {
    missing += "the compiled Curator peer (cmake found no javac or no Curator jar); ";
  } else if (!std::filesystem::exists(classes + "/CuratorPeer.class")) {
    missing += classes + "/CuratorPeer.class (build the target distlock_curator_peer); ";
  }
  const std::vector<std::string> jars = split(DISTLOCK_CURATOR_CLASSPATH, ':');
  if (jars.empty()) missing += "the Curator jars (cmake found none); ";
  for (const std::string& jar : jars) {
    if (!std::filesystem::exists(jar)) missing += jar + "; ";
  }
  if (missing.empty()) return "";
  return "missing: " + missing + kPackages;
}

CuratorPeer::CuratorPeer(const std::string& connect_string,
                         const std::vector<std::string>& mode_and_args,
                         CuratorPeerOptions options)
    : owner_(::getpid()) {
  if (const std::string missing = curator_peer_missing(); !missing.empty()) {
    throw std::runtime_error("CuratorPeer: " + missing);
  }
  dir_ = make_temp_dir("distlock-curator-");
  try {
    std::filesystem::create_directories(dir_ + "/tmp");
    // stdin: a FIFO held open read-write here, so opening it never blocks
    // and the peer reads EOF only once this end is closed.
    const std::string fifo = dir_ + "/stdin";
    if (::mkfifo(fifo.c_str(), 0600) != 0) throw_errno("mkfifo " + fifo);
    stdin_fd_ = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
    if (stdin_fd_ < 0) throw_errno("open " + fifo);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw_errno("pipe2");
    stdout_fd_ = out[0];
    const int stdout_write = out[1];
    if (::fcntl(stdout_fd_, F_SETFL, O_NONBLOCK) != 0) {
      ::close(stdout_write);
      throw_errno("fcntl O_NONBLOCK");
    }
    const int log_fd = ::open(log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) {
      ::close(stdout_write);
      throw_errno("open " + log_path());
    }

    std::vector<std::string> java_argv{
        DISTLOCK_CURATOR_JAVA,
        // A small heap, the serial collector: a fast start and a small
        // footprint; no hsperfdata file in /tmp.
        "-Xmx128m",
        "-XX:+UseSerialGC",
        "-Xshare:auto",
        "-XX:-UsePerfData",
        "-Djava.net.preferIPv4Stack=true",
        "-Djava.io.tmpdir=" + dir_ + "/tmp",
        "-Dorg.slf4j.simpleLogger.showDateTime=true",
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
        "-cp",
        std::string(DISTLOCK_CURATOR_CLASSES) + ":" + DISTLOCK_CURATOR_CLASSPATH,
        "CuratorPeer",
        connect_string,
    };
    // C1 only, for a faster start, except for a benchmark's steady state.
    if (mode_and_args.empty() || (mode_and_args[0] != "bench" && mode_and_args[0] != "handoff")) {
      java_argv.insert(java_argv.begin() + 1, "-XX:TieredStopAtLevel=1");
    }
    java_argv.insert(java_argv.end(), mode_and_args.begin(), mode_and_args.end());
    for (const std::string& arg : java_argv) command_ += (command_.empty() ? "" : " ") + arg;

    // ChildProcess gives every child /dev/null as stdin: a shell puts the
    // FIFO there and execs java (same pid). The scratch path is [-/A-Za-z0-9].
    std::vector<std::string> argv{"/bin/sh", "-c", "exec \"$@\" < '" + fifo + "'", "curator-peer"};
    argv.insert(argv.end(), java_argv.begin(), java_argv.end());
    SpawnOptions spawn_options;
    spawn_options.env = {
        {"CURATOR_PEER_SESSION_TIMEOUT_MS", std::to_string(options.session_timeout.count())},
        {"CURATOR_PEER_CONNECTION_TIMEOUT_MS", std::to_string(options.connection_timeout.count())},
        {"CURATOR_PEER_WARMUP_MS", std::to_string(options.warmup.count())},
    };
    spawn_options.stdout_fd = stdout_write;
    spawn_options.stderr_fd = log_fd;
    try {
      process_ = ChildProcess::spawn(argv, spawn_options);
    } catch (...) {
      ::close(stdout_write);
      ::close(log_fd);
      throw;
    }
    // Only the peer holds the write end now: its exit ends stdout.
    ::close(stdout_write);
    ::close(log_fd);
  } catch (...) {
    process_.kill_and_reap();
    if (stdin_fd_ >= 0) ::close(stdin_fd_);
    if (stdout_fd_ >= 0) ::close(stdout_fd_);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

CuratorPeer::~CuratorPeer() {
  if (::getpid() != owner_) return;
  process_.kill_and_reap();
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string CuratorPeer::log_path() const {
  return dir_ + "/peer.log";
}

bool CuratorPeer::read_ready() {
  while (!eof_) {
    char buffer[4096];
    const ssize_t n = ::read(stdout_fd_, buffer, sizeof buffer);
    if (n > 0) {
      partial_.append(buffer, static_cast<std::size_t>(n));
      for (std::size_t newline; (newline = partial_.find('\n')) != std::string::npos;) {
        lines_.push_back(partial_.substr(0, newline));
        partial_.erase(0, newline + 1);
      }
    } else if (n == 0) {
      eof_ = true;
    } else if (errno == EAGAIN) {
      break;
    } else if (errno != EINTR) {
      throw_errno("read the Curator peer's stdout");
    }
  }
  return !eof_;
}

std::optional<std::string> CuratorPeer::poll_line(std::string_view prefix) {
  read_ready();
  for (; next_ < lines_.size(); ++next_) {
    if (starts_with(lines_[next_], prefix)) return lines_[next_++];
  }
  return std::nullopt;
}

std::string CuratorPeer::expect_line(std::string_view prefix, std::chrono::milliseconds bound) {
  const auto deadline = Clock::now() + bound;
  for (;;) {
    if (std::optional<std::string> line = poll_line(prefix)) return *line;
    if (eof_) {
      // The peer exited (or closed stdout): reap it for the message.
      process_.wait_for_exit(std::chrono::seconds(5));
      fail("stdout ended before a line starting with '" + std::string(prefix) + "'");
    }
    if (!poll_for(stdout_fd_, POLLIN, deadline)) {
      read_ready();
      if (std::optional<std::string> line = poll_line(prefix)) return *line;
      fail("no line starting with '" + std::string(prefix) + "' within " +
           std::to_string(bound.count()) + " ms");
    }
  }
}

std::string CuratorPeer::output() const {
  std::string text;
  for (const std::string& line : lines_) text += line + "\n";
  return text;
}

void CuratorPeer::send(std::string_view line) {
  if (stdin_fd_ < 0) throw std::logic_error("CuratorPeer::send after close_stdin");
  std::string data(line);
  data += '\n';
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(stdin_fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("write the Curator peer's stdin");
    done += static_cast<std::size_t>(n);
  }
}

void CuratorPeer::close_stdin() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
}

int CuratorPeer::wait_exit(std::chrono::milliseconds bound) {
  const std::optional<int> status = process_.wait_for_exit(bound);
  if (!status) fail("still running after " + std::to_string(bound.count()) + " ms");
  if (!WIFEXITED(*status)) fail(describe_wait_status(*status));
  return WEXITSTATUS(*status);
}

void CuratorPeer::kill() {
  process_.kill_and_reap();
}

std::string CuratorPeer::describe(std::size_t log_lines) const {
  std::string text = "Curator peer pid " + std::to_string(pid()) + ": " + command_;
  text += "\n-- its stdout so far:\n" + output();
  if (!partial_.empty()) text += partial_ + " [no newline]\n";
  text += "-- the last " + std::to_string(log_lines) + " lines of " + log_path() + ":\n" +
          tail(read_from(log_path(), 0), log_lines);
  return text;
}

void CuratorPeer::fail(const std::string& problem) const {
  std::string status;
  if (!process_.running()) status = " (the process has exited)";
  throw std::runtime_error("CuratorPeer: " + problem + status + "\n" + describe());
}

}  // namespace distlock::test
