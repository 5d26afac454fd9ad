#include "support/zookeeper_ensemble.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "support/fixture_io.hpp"
#include "support/free_ports.hpp"
#include "support/poll_until.hpp"

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::chrono::seconds kStartBound{60};
constexpr std::chrono::seconds kStopBound{5};
constexpr std::chrono::seconds kModeBound{2};
constexpr int kPortAttempts = 3;

// Debian: libzookeeper-java (a dependency of zookeeper) ships the server jar,
// whose manifest names its own dependencies' jars; libslf4j-java (a
// dependency of libzookeeper-java) ships slf4j-simple, the binding that makes
// the server log to stderr (without one, slf4j drops every line).
constexpr const char* kZooKeeperJar = "/usr/share/java/zookeeper.jar";
constexpr const char* kLogBindingJar = "/usr/share/java/slf4j-simple.jar";
constexpr const char* kMainClass = "org.apache.zookeeper.server.quorum.QuorumPeerMain";
constexpr const char* kPackages =
    "install the Debian packages zookeeper and default-jre-headless (scripts/setup.sh does)";

// java from PATH (Debian: /usr/bin/java, an alternative of
// default-jre-headless's runtime); "" if there is none.
std::string find_java() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/java";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// The value of the line "<name><separator>value" in a four-letter-word reply.
std::optional<std::string> field(const std::string& reply,
                                 const std::string& name,
                                 const std::string& separator) {
  std::istringstream lines(reply);
  std::string line;
  const std::string prefix = name + separator;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return std::nullopt;
}

}  // namespace

std::string zookeeper_four_letter(std::uint16_t port, const std::string& word, milliseconds bound) {
  const auto deadline = Clock::now() + bound;
  const std::string where = word + " to 127.0.0.1:" + std::to_string(port);
  const Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (s.get() < 0) throw std::system_error(errno, std::generic_category(), "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) {
      throw std::runtime_error(where + ": connect: " + std::strerror(errno));
    }
    if (!poll_for(s.get(), POLLOUT, deadline)) {
      throw std::runtime_error(where + ": not connected within " + std::to_string(bound.count()) +
                               " ms");
    }
    int error = 0;
    socklen_t len = sizeof error;
    if (::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
      throw std::runtime_error(where + ": connect: " + std::strerror(error));
    }
  }
  if (::send(s.get(), word.data(), word.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(word.size())) {
    throw std::runtime_error(where + ": send: " + std::strerror(errno));
  }
  std::string reply;
  for (;;) {
    if (!poll_for(s.get(), POLLIN, deadline)) {
      throw std::runtime_error(where + ": the reply did not end within " +
                               std::to_string(bound.count()) + " ms; got: " + reply);
    }
    char buffer[4096];
    const ssize_t n = ::recv(s.get(), buffer, sizeof buffer, 0);
    if (n == 0) return reply;
    if (n > 0) {
      reply.append(buffer, static_cast<std::size_t>(n));
    } else if (errno != EAGAIN && errno != EINTR) {
      throw std::runtime_error(where + ": recv: " + std::strerror(errno) + "; got: " + reply);
    }
  }
}

ZooKeeperEnsemble::ZooKeeperEnsemble(ZooKeeperEnsembleOptions options)
    : options_(std::move(options)), owner_(::getpid()) {
  if (options_.nodes < 1) {
    throw std::invalid_argument("ZooKeeperEnsemble: nodes must be at least 1, not " +
                                std::to_string(options_.nodes));
  }
  java_ = find_java();
  if (java_.empty())
    throw std::runtime_error(std::string("ZooKeeperEnsemble: no java on PATH: ") + kPackages);
  for (const char* jar : {kZooKeeperJar, kLogBindingJar}) {
    if (!std::filesystem::exists(jar)) {
      throw std::runtime_error(std::string("ZooKeeperEnsemble: ") + jar +
                               " is missing: " + kPackages);
    }
  }
  dir_ = make_temp_dir("distlock-zk-");
  try {
    nodes_.resize(static_cast<std::size_t>(options_.nodes));
    for (int i = 0; i < node_count(); ++i) {
      std::filesystem::create_directories(node_dir(i) + "/data");
      std::filesystem::create_directories(node_dir(i) + "/tmp");
      std::ofstream myid(node_dir(i) + "/data/myid");
      myid << i + 1 << "\n";
      if (!myid.flush()) throw std::runtime_error("cannot write " + node_dir(i) + "/data/myid");
    }
    for (int attempt = 1; !start_all(); ++attempt) {
      if (attempt == kPortAttempts) {
        throw std::runtime_error("ZooKeeperEnsemble: a port was taken before a node bound it, " +
                                 std::to_string(kPortAttempts) + " times; logs:\n" + logs());
      }
    }
  } catch (...) {
    kill_all();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

ZooKeeperEnsemble::~ZooKeeperEnsemble() {
  if (::getpid() != owner_) return;
  kill_all();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

// One attempt with fresh ports. Returns false (every node killed) when a
// node logged that a port was in use: another process bound it after
// pick_free_ports released it.
bool ZooKeeperEnsemble::start_all() {
  const std::vector<std::uint16_t> ports = pick_free_ports(3 * nodes_.size());
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i].client_port = ports[i];
    nodes_[i].quorum_port = ports[nodes_.size() + i];
    nodes_[i].election_port = ports[2 * nodes_.size() + i];
  }
  for (int i = 0; i < node_count(); ++i) write_config(i);
  for (int i = 0; i < node_count(); ++i) launch(i);
  std::optional<int> exited;
  bool port_taken = false;
  const bool served = poll_until(
      [&] {
        // Exits first: a node that exited has written its whole log.
        for (int i = 0; i < node_count() && !exited; ++i) {
          if (!running(i)) exited = i;
        }
        port_taken = bind_failed();
        return port_taken || exited || serving();
      },
      Clock::now() + kStartBound);
  if (port_taken) {
    kill_all();
    // The next attempt starts from empty data dirs (myid only), as the first.
    for (int i = 0; i < node_count(); ++i) {
      std::filesystem::remove_all(node_dir(i) + "/data/version-2");
    }
    return false;
  }
  if (exited) {
    Node& n = node(*exited);
    const int status = n.process.kill_and_reap();  // reaps: it has exited
    throw std::runtime_error("ZooKeeperEnsemble: node " + std::to_string(*exited) + " (pid " +
                             std::to_string(n.process.pid()) + ") " + describe_wait_status(status) +
                             " before the ensemble served; logs:\n" + logs());
  }
  if (!served) {
    throw std::runtime_error("ZooKeeperEnsemble: the ensemble did not serve within " +
                             std::to_string(kStartBound.count()) + " s (modes:" + modes() +
                             "); logs:\n" + logs());
  }
  return true;
}

void ZooKeeperEnsemble::write_config(int i) const {
  const Node& n = node(i);
  std::ofstream conf(node_dir(i) + "/zoo.cfg");
  conf << "tickTime=" << options_.tick_time.count() << "\ninitLimit=" << options_.init_limit
       << "\nsyncLimit=" << options_.sync_limit << "\ndataDir=" << node_dir(i) << "/data"
       << "\nclientPort=" << n.client_port << "\nclientPortAddress=127.0.0.1"
       << "\nminSessionTimeout=" << options_.min_session_timeout.count()
       << "\nmaxSessionTimeout=" << options_.max_session_timeout.count()
       << "\n4lw.commands.whitelist=*\nadmin.enableServer=false"
       // A single node runs as a quorum peer too (Mode: leader, not standalone).
       << "\nstandaloneEnabled=false"
       // Every test client connects from 127.0.0.1: no per-address limit (60).
       << "\nmaxClientCnxns=0"
       // No fsync per transaction (a killed process's writes survive in the
       // page cache) and 1 MB transaction log files instead of 64 MB.
       << "\nforceSync=no\npreAllocSize=1024\n";
  for (int j = 0; j < node_count(); ++j) {
    conf << "server." << j + 1 << "=127.0.0.1:" << node(j).quorum_port << ":"
         << node(j).election_port << "\n";
  }
  for (const auto& [name, value] : options_.config) conf << name << "=" << value << "\n";
  if (!conf.flush()) throw std::runtime_error("cannot write " + node_dir(i) + "/zoo.cfg");
}

void ZooKeeperEnsemble::launch(int i) {
  Node& n = node(i);
  n.log_offset = size_or_zero(log_path(i));
  SpawnOptions spawn_options;
  spawn_options.output_path = log_path(i);
  const std::vector<std::string> argv{
      java_,
      // A small heap, the serial collector and C1 only: a fast start and a
      // small footprint; no hsperfdata file in /tmp.
      "-Xmx128m",
      "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1",
      "-Xshare:auto",
      "-XX:-UsePerfData",
      "-Djava.net.preferIPv4Stack=true",
      "-Djava.io.tmpdir=" + node_dir(i) + "/tmp",
      "-Dzookeeper.admin.enableServer=false",
      "-Dorg.slf4j.simpleLogger.showDateTime=true",
      "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
      // Not a line per four-letter word: the fixture polls srvr every 10 ms.
      "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.NIOServerCnxn=warn",
      "-cp",
      std::string(kZooKeeperJar) + ":" + kLogBindingJar,
      kMainClass,
      node_dir(i) + "/zoo.cfg",
  };
  n.process = ChildProcess::spawn(argv, spawn_options);
  n.stopped = false;
}

bool ZooKeeperEnsemble::bind_failed() const {
  for (int i = 0; i < node_count(); ++i) {
    if (read_from(log_path(i), node(i).log_offset).find("Address already in use") !=
        std::string::npos) {
      return true;
    }
  }
  return false;
}

bool ZooKeeperEnsemble::serving() const {
  int leaders = 0;
  for (int i = 0; i < node_count(); ++i) {
    if (!running(i) || node(i).stopped) continue;
    const std::string m = mode(i);
    if (m == "leader") {
      ++leaders;
    } else if (m != "follower") {
      return false;
    }
  }
  return leaders == 1;
}

void ZooKeeperEnsemble::kill_all() noexcept {
  for (Node& n : nodes_) n.process.kill_and_reap();
}

const ZooKeeperEnsemble::Node& ZooKeeperEnsemble::node(int i) const {
  if (i < 0 || i >= node_count()) {
    throw std::out_of_range("ZooKeeperEnsemble: no node " + std::to_string(i) + " (there are " +
                            std::to_string(node_count()) + ")");
  }
  return nodes_[static_cast<std::size_t>(i)];
}

ZooKeeperEnsemble::Node& ZooKeeperEnsemble::node(int i) {
  return const_cast<Node&>(std::as_const(*this).node(i));
}

std::string ZooKeeperEnsemble::connect_string() const {
  std::string result;
  for (const Node& n : nodes_) {
    if (!result.empty()) result += ',';
    result += "127.0.0.1:" + std::to_string(n.client_port);
  }
  return result;
}

std::uint16_t ZooKeeperEnsemble::client_port(int i) const {
  return node(i).client_port;
}

std::uint16_t ZooKeeperEnsemble::quorum_port(int i) const {
  return node(i).quorum_port;
}

std::uint16_t ZooKeeperEnsemble::election_port(int i) const {
  return node(i).election_port;
}

pid_t ZooKeeperEnsemble::pid(int i) const {
  return node(i).process.pid();
}

bool ZooKeeperEnsemble::running(int i) const {
  return node(i).process.running();
}

std::string ZooKeeperEnsemble::node_dir(int i) const {
  node(i);  // checks the index
  return dir_ + "/node" + std::to_string(i);
}

std::string ZooKeeperEnsemble::log_path(int i) const {
  return node_dir(i) + "/zookeeper.log";
}

std::string ZooKeeperEnsemble::four_letter(int i,
                                           const std::string& word,
                                           milliseconds bound) const {
  return zookeeper_four_letter(client_port(i), word, bound);
}

std::string ZooKeeperEnsemble::mode(int i) const {
  if (!running(i)) return "";
  try {
    return field(four_letter(i, "srvr", kModeBound), "Mode", ": ").value_or("");
  } catch (const std::runtime_error&) {
    return "";
  }
}

int ZooKeeperEnsemble::leader(milliseconds bound) const {
  int found = -1;
  const bool one = poll_until(
      [&] {
        int leaders = 0;
        for (int i = 0; i < node_count(); ++i) {
          if (running(i) && !node(i).stopped && mode(i) == "leader") {
            found = i;
            ++leaders;
          }
        }
        return leaders == 1;
      },
      Clock::now() + bound);
  if (!one) {
    throw std::runtime_error("ZooKeeperEnsemble: no single leader within " +
                             std::to_string(bound.count()) + " ms; logs:\n" + logs());
  }
  return found;
}

long long ZooKeeperEnsemble::watch_count(int i) const {
  const std::string reply = four_letter(i, "mntr");
  const std::optional<std::string> value = field(reply, "zk_watch_count", "\t");
  if (!value) {
    throw std::runtime_error("ZooKeeperEnsemble: node " + std::to_string(i) +
                             " answered mntr without zk_watch_count: " + reply);
  }
  return std::stoll(*value);
}

void ZooKeeperEnsemble::kill(int i) {
  Node& n = node(i);
  n.process.kill_and_reap();
  n.stopped = false;
}

void ZooKeeperEnsemble::stop(int i) {
  Node& n = node(i);
  if (!n.process.running()) throw std::logic_error("ZooKeeperEnsemble::stop: node not running");
  n.process.signal(SIGSTOP);
  n.stopped = true;
  if (!n.process.wait_for_stopped(kStopBound)) {
    throw std::runtime_error("ZooKeeperEnsemble: node " + std::to_string(i) + " (pid " +
                             std::to_string(n.process.pid()) + ") did not stop");
  }
}

void ZooKeeperEnsemble::resume(int i) {
  Node& n = node(i);
  if (!n.process.running()) throw std::logic_error("ZooKeeperEnsemble::resume: node not running");
  n.process.signal(SIGCONT);
  n.stopped = false;
}

void ZooKeeperEnsemble::restart(int i, milliseconds bound) {
  if (running(i)) throw std::logic_error("ZooKeeperEnsemble::restart: node is running");
  node(i).process.kill_and_reap();  // reaps a node that exited by itself
  launch(i);
  bool exited = false;
  const bool served = poll_until(
      [&] {
        exited = !running(i);
        return exited || serving();
      },
      Clock::now() + bound);
  if (exited) {
    throw std::runtime_error("ZooKeeperEnsemble: restarted node " + std::to_string(i) +
                             " exited; logs:\n" + logs());
  }
  if (!served) {
    throw std::runtime_error("ZooKeeperEnsemble: restarted node " + std::to_string(i) +
                             " did not serve within " + std::to_string(bound.count()) +
                             " ms; logs:\n" + logs());
  }
}

void ZooKeeperEnsemble::wait_until_serving(milliseconds bound) const {
  if (!poll_until([&] { return serving(); }, Clock::now() + bound)) {
    throw std::runtime_error("ZooKeeperEnsemble: not serving within " +
                             std::to_string(bound.count()) + " ms (modes:" + modes() +
                             "); logs:\n" + logs());
  }
}

std::string ZooKeeperEnsemble::modes() const {
  std::string result;
  for (int i = 0; i < node_count(); ++i) {
    const std::string m = !running(i) ? "not-running" : node(i).stopped ? "stopped" : mode(i);
    result += " " + std::to_string(i) + "=" + (m.empty() ? "not-serving" : m);
  }
  return result;
}

std::string ZooKeeperEnsemble::logs(std::size_t lines) const {
  std::ostringstream out;
  for (int i = 0; i < node_count(); ++i) {
    const Node& n = node(i);
    out << "--- node " << i << " (myid " << i + 1 << ", pid " << n.process.pid() << ", "
        << (!n.process.running() ? "not running"
            : n.stopped          ? "stopped"
                                 : "running")
        << ", client port " << n.client_port << ", quorum port " << n.quorum_port
        << ", election port " << n.election_port << "): " << log_path(i) << "\n"
        << tail(read_from(log_path(i), 0), lines) << "\n";
  }
  return out.str();
}

}  // namespace distlock::test
