// Tests of the ZooKeeper ensemble test fixture itself (the groundwork of the
// ZooKeeper backend's tests): each starts one real 3-node ensemble, java
// processes from Debian's zookeeper package. Without java or the jars they
// fail with the constructor's message naming the packages.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/poll_until.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Listener {
  std::string address;  // dotted IPv4 ("::" for an IPv6 wildcard and so on)
  std::string inode;
};

// "0100007F" (little-endian, as /proc/net/tcp prints it) -> "127.0.0.1";
// IPv6 addresses from /proc/net/tcp6 become "127.0.0.1" when v4-mapped and
// "ipv6:<hex>" otherwise.
std::string proc_address(const std::string& hex) {
  std::string v4 = hex;
  if (hex.size() == 32) {
    if (hex.substr(0, 24) != "0000000000000000FFFF0000") return "ipv6:" + hex;
    v4 = hex.substr(24);
  }
  const unsigned long value = std::stoul(v4, nullptr, 16);
  return std::to_string(value & 0xff) + "." + std::to_string((value >> 8) & 0xff) + "." +
         std::to_string((value >> 16) & 0xff) + "." + std::to_string((value >> 24) & 0xff);
}

// Every TCP socket listening on `port`, from /proc/net/tcp and tcp6.
std::vector<Listener> listeners(std::uint16_t port) {
  std::vector<Listener> result;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      const auto colon = local.find(':');
      if (state != "0A" || colon == std::string::npos) continue;  // 0A: LISTEN
      if (std::stoul(local.substr(colon + 1), nullptr, 16) != port) continue;
      result.push_back({proc_address(local.substr(0, colon)), inode});
    }
  }
  return result;
}

// The inodes of the sockets process `pid` has open.
std::set<std::string> socket_inodes(pid_t pid) {
  std::set<std::string> result;
  std::error_code ec;
  for (const auto& fd :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (target.rfind("socket:[", 0) == 0) result.insert(target.substr(8, target.size() - 9));
  }
  return result;
}

// Empty when `port` is listened on, by `pid` only and on 127.0.0.1 only;
// otherwise what is wrong.
std::string loopback_listener_problem(std::uint16_t port, pid_t pid) {
  const std::vector<Listener> found = listeners(port);
  if (found.empty()) return "nothing listens on port " + std::to_string(port);
  const std::set<std::string> own = socket_inodes(pid);
  std::string problems;
  for (const Listener& l : found) {
    if (l.address != "127.0.0.1") {
      problems += "port " + std::to_string(port) + " listened on " + l.address + "; ";
    }
    if (own.count(l.inode) == 0) {
      problems += "port " + std::to_string(port) + " listened on by another process than " +
                  std::to_string(pid) + "; ";
    }
  }
  return problems;
}

// The pids of this test binary's children (running, stopped or zombies).
std::vector<pid_t> children_of_this_process() {
  std::vector<pid_t> result;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    if (!std::getline(stat, text)) continue;  // gone meanwhile
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const auto close = text.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == ::getpid()) result.push_back(std::stoi(name));
  }
  return result;
}

TEST(ZooKeeperFixture, StartedEnsembleHasOneLeaderAndTwoFollowersOnDistinctFreeLoopbackPorts) {
  const auto start = Clock::now();
  ZooKeeperEnsemble zk;
  ::testing::Test::RecordProperty("startup_ms", std::to_string(ms_since(start)));
  ASSERT_EQ(zk.node_count(), 3);
  int leaders = 0;
  int followers = 0;
  for (int i = 0; i < zk.node_count(); ++i) {
    const std::string mode = zk.mode(i);
    leaders += mode == "leader";
    followers += mode == "follower";
    EXPECT_TRUE(contains(zk.four_letter(i, "srvr"), "Mode: " + mode)) << "node " << i;
    EXPECT_EQ(zk.four_letter(i, "ruok"), "imok") << "node " << i;
    EXPECT_EQ(zk.watch_count(i), 0) << "node " << i << ": no client has set a watch";
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(followers, 2);
  const int leader = zk.leader();
  EXPECT_EQ(zk.mode(leader), "leader");

  std::set<std::uint16_t> ports;
  std::string connect_string;
  for (int i = 0; i < zk.node_count(); ++i) {
    for (const std::uint16_t port : {zk.client_port(i), zk.quorum_port(i), zk.election_port(i)}) {
      EXPECT_NE(port, 2181) << "node " << i;
      ports.insert(port);
    }
    // Every node listens on its client and election ports; only the leader on
    // its quorum port (the followers connect to it).
    EXPECT_EQ(loopback_listener_problem(zk.client_port(i), zk.pid(i)), "") << "node " << i;
    EXPECT_EQ(loopback_listener_problem(zk.election_port(i), zk.pid(i)), "") << "node " << i;
    connect_string += (i > 0 ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(zk.client_port(i));
  }
  EXPECT_EQ(loopback_listener_problem(zk.quorum_port(leader), zk.pid(leader)), "");
  EXPECT_EQ(ports.size(), 9u) << "3 distinct ports per node";
  EXPECT_EQ(zk.connect_string(), connect_string);
}

TEST(ZooKeeperFixture, KilledLeaderIsReplacedByAnotherNodeAndRestartedNodeRejoinsAsFollower) {
  ZooKeeperEnsemble zk;
  const int old_leader = zk.leader();
  const pid_t old_pid = zk.pid(old_leader);
  zk.kill(old_leader);
  EXPECT_FALSE(zk.running(old_leader));
  EXPECT_THROW(zk.four_letter(old_leader, "srvr"), std::runtime_error) << "nothing answers";

  const auto start = Clock::now();
  zk.wait_until_serving();
  ::testing::Test::RecordProperty("election_ms", std::to_string(ms_since(start)));
  // Read once, right after wait_until_serving returned: no polling here.
  std::vector<std::string> modes;
  for (int i = 0; i < zk.node_count(); ++i) modes.push_back(zk.mode(i));
  int new_leader = -1;
  int followers = 0;
  for (int i = 0; i < zk.node_count(); ++i) {
    if (modes[static_cast<std::size_t>(i)] == "leader") {
      EXPECT_EQ(new_leader, -1) << "two leaders: " << new_leader << " and " << i;
      new_leader = i;
    }
    followers += modes[static_cast<std::size_t>(i)] == "follower";
  }
  EXPECT_EQ(modes[static_cast<std::size_t>(old_leader)], "");
  ASSERT_NE(new_leader, -1) << "no leader among the remaining two";
  EXPECT_NE(new_leader, old_leader);
  EXPECT_EQ(followers, 1) << "the third node follows the new leader";
  EXPECT_EQ(zk.leader(), new_leader);

  const auto restart = Clock::now();
  zk.restart(old_leader);
  ::testing::Test::RecordProperty("rejoin_ms", std::to_string(ms_since(restart)));
  EXPECT_TRUE(zk.running(old_leader));
  EXPECT_NE(zk.pid(old_leader), old_pid);
  EXPECT_EQ(zk.mode(old_leader), "follower") << "an ensemble with a leader keeps it";
  EXPECT_EQ(zk.leader(), new_leader);
  EXPECT_EQ(zk.mode(new_leader), "leader");
}

// The followers of a SIGSTOPped leader still say "follower" until they give
// it up (sync_limit ticks, 2 s): wait_until_serving must wait for a leader,
// not for the absence of anything else.
TEST(ZooKeeperFixture, StoppedLeaderIsReplacedByAnotherNodeAndRejoinsAsFollowerWhenResumed) {
  ZooKeeperEnsemble zk;
  const int old_leader = zk.leader();
  zk.stop(old_leader);
  const auto start = Clock::now();
  zk.wait_until_serving();
  ::testing::Test::RecordProperty("election_ms", std::to_string(ms_since(start)));
  int new_leader = -1;
  int followers = 0;
  for (int i = 0; i < zk.node_count(); ++i) {
    if (i == old_leader) continue;
    const std::string mode = zk.mode(i);  // read once: no polling here
    if (mode == "leader") new_leader = i;
    followers += mode == "follower";
  }
  ASSERT_NE(new_leader, -1) << "no leader among the other two";
  EXPECT_EQ(followers, 1);

  zk.resume(old_leader);
  zk.wait_until_serving();
  EXPECT_EQ(zk.mode(old_leader), "follower") << "the old leader lost its quorum";
  EXPECT_EQ(zk.leader(), new_leader);
}

TEST(ZooKeeperFixture, StoppedNodeDoesNotAnswerSrvrUntilResumed) {
  ZooKeeperEnsemble zk;
  const int leader = zk.leader();
  const int node = (leader + 1) % zk.node_count();
  zk.stop(node);
  EXPECT_TRUE(zk.running(node)) << "a stopped process is alive";
  try {
    const std::string reply = zk.four_letter(node, "srvr", milliseconds(500));
    ADD_FAILURE() << "a stopped node answered: " << reply;
  } catch (const std::runtime_error& e) {
    // The kernel accepts the connection; the process never answers.
    EXPECT_TRUE(contains(e.what(), "did not end within")) << e.what();
  }
  EXPECT_EQ(zk.mode(node), "");
  zk.wait_until_serving();  // the other two (a quorum) still serve
  EXPECT_EQ(zk.mode(leader), "leader");

  zk.resume(node);
  EXPECT_TRUE(poll_until([&] { return zk.mode(node) == "follower"; },
                         Clock::now() + std::chrono::seconds(60)))
      << zk.logs();
  zk.wait_until_serving();
  EXPECT_EQ(zk.leader(), leader) << "the leader kept its quorum all along";
}

TEST(ZooKeeperFixture, DestructorLeavesNoProcessAndNoScratchDirectory) {
  std::vector<pid_t> pids;
  std::string dir;
  {
    ZooKeeperEnsemble zk;
    zk.stop((zk.leader() + 1) % zk.node_count());  // a stopped node is killed too
    for (int i = 0; i < zk.node_count(); ++i) pids.push_back(zk.pid(i));
    dir = zk.dir();
    ASSERT_TRUE(std::filesystem::is_directory(dir + "/node0/data"));
    ASSERT_EQ(children_of_this_process().size(), 3u);
  }
  for (const pid_t pid : pids) {
    errno = 0;
    EXPECT_EQ(::kill(pid, 0), -1) << "pid " << pid << " still exists";
    EXPECT_EQ(errno, ESRCH) << "pid " << pid;
  }
  EXPECT_EQ(children_of_this_process(), std::vector<pid_t>{}) << "not even a zombie";
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

TEST(ZooKeeperFixture, NodeThatCannotStartFailsTheConstructorWithItsLogAndLeavesNoProcess) {
  ZooKeeperEnsembleOptions options;
  options.config = {{"tickTime", "not-a-number"}};
  try {
    ZooKeeperEnsemble zk(options);
    ADD_FAILURE() << "started with a bad tickTime";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_TRUE(contains(what, "before the ensemble served")) << what;
    EXPECT_TRUE(contains(what, "not-a-number")) << "the log tail names the cause: " << what;
  }
  EXPECT_EQ(children_of_this_process(), std::vector<pid_t>{});
}

}  // namespace
}  // namespace distlock::test
