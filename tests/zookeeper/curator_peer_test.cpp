// The Curator peer (support/curator_peer.hpp) against a real ZooKeeper
// ensemble: real Apache Curator InterProcessMutex processes, the reference
// that distlock's ZooKeeper lock interoperates with. Without java, javac or
// the Curator jars these tests fail with a message naming the Debian
// packages (as the ensemble's own tests do).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/curator_peer.hpp"
#include "support/poll_until.hpp"
#include "support/process.hpp"
#include "support/refusing_port.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// "ACQUIRED <node>" -> "<node>".
std::string node_of(const std::string& acquired_line) {
  const std::string prefix = "ACQUIRED ";
  return acquired_line.rfind(prefix, 0) == 0 ? acquired_line.substr(prefix.size()) : "";
}

// Curator's InterProcessMutex node: <path>/_c_<uuid>-lock-<10-digit sequence>
// (the "_c_<uuid>-" prefix is the protected mode's, which finds its own node
// again after a connection loss during the create).
bool is_curator_lock_node(const std::string& path, const std::string& node) {
  static const std::regex name(
      "_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-[0-9]{10}");
  return node.rfind(path + "/", 0) == 0 && std::regex_match(node.substr(path.size() + 1), name) &&
         node.find('/', path.size() + 1) == std::string::npos;
}

// The ephemeral nodes directly under `path`, from the leader's dump (which
// lists every session's ephemeral nodes), in dump order.
std::vector<std::string> ephemeral_children(const ZooKeeperEnsemble& zk, const std::string& path) {
  const std::string dump = zk.four_letter(zk.leader(), "dump");
  std::istringstream lines(dump.substr(dump.find("ephemeral nodes dump:") == std::string::npos
                                           ? dump.size()
                                           : dump.find("ephemeral nodes dump:")));
  std::vector<std::string> children;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Connections dump:", 0) == 0) break;
    if (line.rfind("\t" + path + "/", 0) == 0) children.push_back(line.substr(1));
  }
  return children;
}

// True if some client watches `node`, by any running node's wchp (each
// server lists the watches of its own clients).
bool watched(const ZooKeeperEnsemble& zk, const std::string& node) {
  for (int i = 0; i < zk.node_count(); ++i) {
    if (!zk.running(i)) continue;
    std::istringstream lines(zk.four_letter(i, "wchp"));
    for (std::string line; std::getline(lines, line);) {
      if (line == node) return true;
    }
  }
  return false;
}

// The sequence number at the end of a lock node's name.
long long sequence(const std::string& node) {
  return std::stoll(node.substr(node.size() - 10));
}

std::map<std::string, std::string> result_fields(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream words(line);
  std::string word;
  words >> word;  // RESULT
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return fields;
}

// (a) and (b): a second Curator peer waits while the first holds, and
// acquires only once the first releases. "Not before the release" is checked
// without a sleep: once the waiter's lock node exists and it watches the
// holder's node, Curator's lock loop has seen it is not the lowest and waits
// for that node's deletion.
TEST(CuratorPeer, SecondPeerWaitsForTheFirstsReleaseOnCuratorLockNodes) {
  ZooKeeperEnsemble zk;
  const std::string path = "/distlock-test/curator-mutex";

  const auto start = Clock::now();
  CuratorPeer first(zk.connect_string(), {"hold", path});
  first.expect_line("CONNECTED");
  ::testing::Test::RecordProperty(
      "start_to_connected_ms",
      std::to_string(std::chrono::duration_cast<milliseconds>(Clock::now() - start).count()));
  const std::string first_node = node_of(first.expect_line("ACQUIRED "));
  EXPECT_TRUE(is_curator_lock_node(path, first_node)) << first_node;
  EXPECT_EQ(ephemeral_children(zk, path), std::vector<std::string>{first_node});

  CuratorPeer second(zk.connect_string(), {"wait", path});
  second.expect_line("WAITING");
  std::optional<std::string> early;
  std::vector<std::string> children;
  const bool waiting = poll_until(
      [&] {
        early = second.poll_line("ACQUIRED");
        if (early) return true;
        children = ephemeral_children(zk, path);
        return children.size() == 2 && watched(zk, first_node);
      },
      Clock::now() + std::chrono::seconds(60));
  ASSERT_FALSE(early) << "the second peer acquired while the first held: " << *early << "\n"
                      << first.describe() << "\n"
                      << second.describe();
  ASSERT_TRUE(waiting) << "the second peer's lock node and its watch on " << first_node
                       << " did not appear; children:\n"
                       << ::testing::PrintToString(children) << "\n"
                       << second.describe();
  ASSERT_EQ(children.size(), 2u);
  const std::string waiting_node = children[0] == first_node ? children[1] : children[0];
  EXPECT_TRUE(is_curator_lock_node(path, waiting_node)) << waiting_node;
  EXPECT_GT(sequence(waiting_node), sequence(first_node));

  // A third peer's bounded try times out while the first holds.
  CuratorPeer trier(zk.connect_string(), {"try", path, "200"});
  trier.expect_line("TIMEOUT");
  EXPECT_EQ(trier.wait_exit(), 0) << trier.describe();
  EXPECT_FALSE(second.poll_line("ACQUIRED")) << second.describe();

  first.send("release");
  first.expect_line("RELEASED");
  const std::string second_node = node_of(second.expect_line("ACQUIRED "));
  EXPECT_EQ(second_node, waiting_node);
  EXPECT_EQ(ephemeral_children(zk, path), std::vector<std::string>{second_node});

  // EOF on stdin: the holder releases and exits; the released one just exits.
  second.close_stdin();
  second.expect_line("RELEASED");
  EXPECT_EQ(second.wait_exit(), 0) << second.describe();
  first.close_stdin();
  EXPECT_EQ(first.wait_exit(), 0) << first.describe();
  EXPECT_EQ(ephemeral_children(zk, path), std::vector<std::string>{});
}

// (c) Two peers increment one counter file under the lock at once: no
// increment is lost.
TEST(CuratorPeer, CounterFromTwoPeersAtOnceEndsWithTheExactSum) {
  ZooKeeperEnsemble zk;
  const std::string dir = make_temp_dir("distlock-curator-counter-");
  const std::string file = dir + "/counter";
  constexpr int kEach = 200;
  {
    const std::vector<std::string> args{"counter", "/distlock-test/counter", file,
                                        std::to_string(kEach)};
    CuratorPeer a(zk.connect_string(), args);
    CuratorPeer b(zk.connect_string(), args);
    EXPECT_EQ(a.expect_line("DONE "), "DONE " + std::to_string(kEach));
    EXPECT_EQ(b.expect_line("DONE "), "DONE " + std::to_string(kEach));
    EXPECT_EQ(a.wait_exit(), 0) << a.describe();
    EXPECT_EQ(b.wait_exit(), 0) << b.describe();
  }
  std::ifstream in(file);
  long long value = -1;
  in >> value;
  EXPECT_EQ(value, 2 * kEach);
  std::filesystem::remove_all(dir);
}

// (d) The benchmark mode prints one parsable RESULT line per kind.
TEST(CuratorPeer, BenchPrintsAResultLineForUncontendedAndContended) {
  ZooKeeperEnsemble zk;
  for (const std::string kind : {"uncontended", "contended"}) {
    CuratorPeer bench(zk.connect_string(),
                      {"bench", "/distlock-test/bench-" + kind, "2", "1", kind});
    const std::string line = bench.expect_line("RESULT ");
    EXPECT_EQ(bench.wait_exit(), 0) << bench.describe();
    const auto fields = result_fields(line);
    ASSERT_EQ(fields.size(), 4u) << line;
    EXPECT_GT(std::stod(fields.at("pairs_per_s")), 0) << line;
    EXPECT_GT(std::stoll(fields.at("pairs")), 0) << line;
    EXPECT_LE(std::stoll(fields.at("acquire_p50_us")), std::stoll(fields.at("acquire_p99_us")))
        << line;
    ::testing::Test::RecordProperty(kind, line);
  }
}

// (e) The handoff mode (backends_bench), after an uncounted warm-up, prints
// one parsable RESULT line: with 3 threads on one path (Curator's queue is
// FIFO), the lock passes between threads, so there are handoffs.
TEST(CuratorPeer, HandoffPrintsAResultLineAfterItsWarmUp) {
  ZooKeeperEnsemble zk;
  CuratorPeerOptions options;
  options.warmup = milliseconds(500);
  CuratorPeer peer(zk.connect_string(), {"handoff", "/distlock-test/handoff", "3", "1"}, options);
  const std::string line = peer.expect_line("RESULT ");
  EXPECT_EQ(peer.wait_exit(), 0) << peer.describe();
  const auto fields = result_fields(line);
  ASSERT_EQ(fields.size(), 5u) << line;
  EXPECT_GT(std::stoll(fields.at("handoffs")), 0) << line;
  EXPECT_LE(std::stoll(fields.at("handoffs")), std::stoll(fields.at("pairs"))) << line;
  EXPECT_GT(std::stod(fields.at("pairs_per_s")), 0) << line;
  EXPECT_LE(std::stoll(fields.at("handoff_p50_us")), std::stoll(fields.at("handoff_p99_us")))
      << line;
  ::testing::Test::RecordProperty("handoff", line);
}

// Exit status 2 for bad usage, checked before connecting; 3 when no server
// answers within the connection timeout. Neither needs an ensemble.
TEST(CuratorPeer, BadUsageExits2AndAnUnreachableEnsembleExits3) {
  CuratorPeer usage("127.0.0.1:1", {"hold"});
  EXPECT_EQ(usage.expect_line("ERROR "), "ERROR usage: too few arguments");
  EXPECT_EQ(usage.wait_exit(), 2) << usage.describe();

  const RefusingPort refusing;
  CuratorPeerOptions options;
  options.connection_timeout = milliseconds(1000);
  CuratorPeer unreachable("127.0.0.1:" + std::to_string(refusing.port()), {"hold", "/x"}, options);
  EXPECT_EQ(unreachable.expect_line("ERROR ").rfind("ERROR not connected to", 0), 0u)
      << unreachable.describe();
  EXPECT_EQ(unreachable.wait_exit(), 3) << unreachable.describe();
}

}  // namespace
}  // namespace distlock::test
