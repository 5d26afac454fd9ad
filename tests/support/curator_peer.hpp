// A real Apache Curator peer for the ZooKeeper lock's interop tests and
// benchmarks: one `java ... CuratorPeer <connect> <mode> <args...>` process
// (tests/interop/curator/CuratorPeer.java, compiled by the build with javac;
// Curator 5.4 from Debian's libcurator-recipes-java), driven through its line
// protocol: commands on its stdin, one event per line on its stdout. The
// modes and lines are documented at the top of CuratorPeer.java; in short:
//
//   hold <path>       "CONNECTED", "ACQUIRED <own lock node>", then obeys
//                     "release" ("RELEASED") and "exit"; stdin EOF releases
//   wait <path>       as hold, with "WAITING" right before acquire()
//   try <path> <ms>   "ACQUIRED <node>" + "RELEASED", or "TIMEOUT"
//   counter <path> <file> <n>
//                     n increments of the integer in <file> under the lock,
//                     then "DONE <n>"
//   bench <path> <threads> <seconds> <uncontended|contended>
//                     "RESULT pairs_per_s=.. acquire_p50_us=.. acquire_p99_us=.. pairs=.."
//                     (with options.warmup, "WARMUP pairs=.." first)
//   handoff <path> <threads> <seconds>
//                     "RESULT handoff_p50_us=.. handoff_p99_us=.. pairs=.. pairs_per_s=..
//                     handoffs=.." (one line)
//
// Typical use, with no sleep as synchronization:
//
//   CuratorPeer holder(zk.connect_string(), {"hold", "/locks/a"});
//   const std::string node = holder.expect_line("ACQUIRED ").substr(9);
//   ...
//   holder.send("release");
//   holder.expect_line("RELEASED");
//   holder.close_stdin();
//   EXPECT_EQ(holder.wait_exit(), 0);
//
// Guarantees:
//   - the process is a test::ChildProcess (killed with the test binary, see
//     process.hpp); its stdout is a pipe read by expect_line/poll_line, its
//     stdin a FIFO in the scratch directory that this object holds open (so
//     the peer sees EOF only on close_stdin() or destruction), its stderr
//     (Curator's and ZooKeeper's slf4j-simple log) the file log_path();
//   - each peer has its own scratch directory /tmp/distlock-curator-XXXXXX
//     (make_temp_dir): the FIFO, peer.log and tmp/ (the JVM's java.io.tmpdir);
//   - every failure (EOF or the bound passing in expect_line, an unexpected
//     exit status, a missing java/jar/class) throws std::runtime_error whose
//     message holds the command, the peer's stdout so far and its log's tail;
//   - a missing javac, java or Curator jar fails the constructor with a
//     message naming the Debian packages (libcurator-recipes-java,
//     default-jdk-headless): the tests fail, they do not skip;
//   - the destructor SIGKILLs (by pid) and reaps the peer and removes the
//     scratch directory. Never throws.
//
// Not thread-safe: use one object from one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.hpp"

namespace distlock::test {

struct CuratorPeerOptions {
  // The session timeout the peer asks for (the ensemble clamps it to its
  // min/max): how long after a SIGKILL its lock node stays.
  // CURATOR_PEER_SESSION_TIMEOUT_MS.
  std::chrono::milliseconds session_timeout{10'000};
  // How long the peer waits for its first connection before it prints
  // "ERROR not connected ..." and exits 3. CURATOR_PEER_CONNECTION_TIMEOUT_MS.
  std::chrono::milliseconds connection_timeout{15'000};
  // bench and handoff: how long their loop runs, uncounted, before the
  // measured window (JIT warm-up). CURATOR_PEER_WARMUP_MS.
  std::chrono::milliseconds warmup{0};
};

// See the header comment.
class CuratorPeer {
 public:
  // The default bound of the waiting calls: only a guard against a hang (a
  // JVM start takes about a second, more under a loaded ctest -j).
  static constexpr std::chrono::milliseconds kDefaultBound{60'000};

  // Starts `java ... CuratorPeer <connect_string> <mode_and_args...>` and
  // returns at once (expect_line("CONNECTED") waits for the connection).
  // Throws std::runtime_error naming the Debian packages when java, the
  // compiled peer or a Curator jar is missing; std::system_error when the
  // process cannot be started.
  CuratorPeer(const std::string& connect_string,
              const std::vector<std::string>& mode_and_args,
              CuratorPeerOptions options = {});
  // SIGKILLs and reaps the peer (if still running) and removes the scratch
  // directory. In a fork()ed copy of the test binary it does nothing.
  ~CuratorPeer();

  CuratorPeer(const CuratorPeer&) = delete;
  CuratorPeer& operator=(const CuratorPeer&) = delete;

  // Reads stdout lines until one starts with `prefix` and returns that whole
  // line (without the newline). Lines before it are skipped (consumed; they
  // stay in output()). Throws std::runtime_error (with the command, the
  // output so far and the log's tail) if stdout ends (the peer exited) or
  // `bound` passes first.
  std::string expect_line(std::string_view prefix, std::chrono::milliseconds bound = kDefaultBound);
  // Without waiting: reads what stdout has ready, and returns the first
  // unconsumed line that starts with `prefix` (consuming every line up to
  // it), or std::nullopt (consuming every complete line read so far).
  std::optional<std::string> poll_line(std::string_view prefix);
  // Every complete stdout line read so far, consumed or not, each ending in
  // '\n'.
  std::string output() const;

  // Writes `line` and a newline to the peer's stdin. Throws std::logic_error
  // after close_stdin(), std::system_error if the write fails.
  void send(std::string_view line);
  // Closes the peer's stdin: it reads EOF (hold/wait: release and exit).
  void close_stdin();

  // Waits at most `bound` for the peer to exit and returns its exit status
  // (0 ok, 1 failure, 2 usage, 3 not connected). Throws std::runtime_error
  // (with output and log) if it is still running after `bound` or was killed
  // by a signal.
  int wait_exit(std::chrono::milliseconds bound = kDefaultBound);
  // SIGKILLs the peer by pid and reaps it; its ZooKeeper session then
  // expires after the session timeout. Does nothing if already reaped.
  void kill();
  // The peer's pid (kept after it is reaped).
  pid_t pid() const { return process_.pid(); }
  // True while the peer's process has not exited.
  bool running() const { return process_.running(); }

  // The scratch directory and the peer's stderr log in it.
  const std::string& dir() const { return dir_; }
  std::string log_path() const;
  // The command, the pid, stdout so far and the last `log_lines` lines of the
  // log, for failure messages.
  std::string describe(std::size_t log_lines = 40) const;

 private:
  // Reads what is ready on stdout into lines_; false once EOF was read.
  bool read_ready();
  [[noreturn]] void fail(const std::string& problem) const;

  std::string command_;
  std::string dir_;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string partial_;             // stdout bytes after the last newline
  std::vector<std::string> lines_;  // complete stdout lines
  std::size_t next_ = 0;            // the first line not yet consumed
  bool eof_ = false;
  ChildProcess process_;
  pid_t owner_;  // the process that created this object
};

// The Curator peer's build products and runtime: empty when java, the
// compiled CuratorPeer class and every jar it needs are there; otherwise
// what is missing and the Debian packages to install.
std::string curator_peer_missing();

}  // namespace distlock::test
