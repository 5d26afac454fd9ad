// SimpleLock against real peer libraries on the same key: node redlock v4
// (tests/peers/redlock_peer.js) and redis-py's Lock
// (tests/peers/redis_py_peer.py) run as separate processes. Neither peer
// publishes on release, so distlock must find their releases by polling.
// A missing peer fails these tests (scripts/test.sh installs both).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::ChildProcess;
using test::RedisServer;

enum class PeerKind { redlock, redis_py };

std::string peer_name(PeerKind kind) {
  return kind == PeerKind::redlock ? "node redlock v4" : "redis-py Lock";
}

// The command line of a peer program, and the environment it needs.
std::vector<std::string> peer_argv(PeerKind kind, std::vector<std::string> args) {
  std::vector<std::string> argv;
  if (kind == PeerKind::redlock) {
    argv = {DISTLOCK_NODE, std::string(DISTLOCK_PEERS_DIR) + "/redlock_peer.js"};
  } else {
    argv = {DISTLOCK_PYTHON3, std::string(DISTLOCK_PEERS_DIR) + "/redis_py_peer.py"};
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

const test::EnvVars kPeerEnv = {{"NODE_PATH", DISTLOCK_NODE_MODULES}};

// Empty when both peers can run; otherwise what is missing and how to get it.
std::string missing_peers() {
  std::string missing;
  try {
    test::run_capture({DISTLOCK_NODE, "-e", "require('redlock'); require('ioredis')"}, 30s,
                      kPeerEnv);
  } catch (const std::exception& e) {
    missing += "node redlock v4 (node '" DISTLOCK_NODE "', modules in " DISTLOCK_NODE_MODULES
               "; run npm ci --prefix bench/peers, or scripts/test.sh): " +
               std::string(e.what()) + "\n";
  }
  try {
    test::run_capture({DISTLOCK_PYTHON3, "-c", "import redis"}, 30s);
  } catch (const std::exception& e) {
    missing += "redis-py (python3 '" DISTLOCK_PYTHON3
               "' with Debian's python3-redis; scripts/setup.sh installs it): " +
               std::string(e.what()) + "\n";
  }
  return missing;
}

// One peer process; its stdout lines are read from a file.
class Peer {
 public:
  Peer(PeerKind kind,
       const RedisServer& server,
       const std::string& key,
       std::string mode,
       std::vector<std::string> more = {})
      : dir_(test::make_temp_dir("distlock-peer-")), out_(dir_ + "/out") {
    std::vector<std::string> args = {std::to_string(server.port()), key, std::move(mode)};
    args.insert(args.end(), more.begin(), more.end());
    test::SpawnOptions o;
    o.env = kPeerEnv;
    o.output_path = out_;
    process_ = ChildProcess::spawn(peer_argv(kind, std::move(args)), o);
  }

  // The rest of the first line starting with `prefix`, waiting at most
  // `bound`; nullopt (with the output so far in `seen`) when none came.
  std::optional<std::string> line(const std::string& prefix,
                                  std::chrono::milliseconds bound = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (;;) {
      std::ifstream in(out_);
      std::string l;
      std::ostringstream all;
      while (std::getline(in, l)) {
        if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size());
        all << l << "\n";
      }
      seen_ = all.str();
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(10ms);
    }
  }
  const std::string& seen() const { return seen_; }
  bool exits_cleanly() {
    const auto status = process_.wait_for_exit(20s);
    return status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
  }

 private:
  std::string dir_;
  std::string out_;
  ChildProcess process_;
  std::string seen_;
};

ClientOptions options_for(const RedisServer& server) {
  ClientOptions o = ClientOptions::from_uri(server.uri());
  o.watchdog_timeout = 30s;
  return o;
}

std::string value_of(Client& c, const std::string& key) {
  const Value v = c.command("GET", key);
  return v.is_nil() ? std::string() : v.as_string();
}

bool waiter_subscribed(Client& c, const std::string& name) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    const Value v = c.command("PUBSUB", "NUMSUB", "distlock_simple_lock__channel:{" + name + "}");
    if (v.as_array()[1].as_integer() > 0) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

// How many EVALSHA calls the server has run (INFO commandstats).
long long evalsha_calls(Client& client) {
  const std::string stats = client.command("INFO", "commandstats").as_string();
  const std::string field = "cmdstat_evalsha:calls=";
  const auto at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

// True once a waiter has made `attempts` more acquire attempts than
// `before` counted: with nothing published, only its poll makes them.
bool polled(Client& c, long long before, int attempts) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (evalsha_calls(c) >= before + attempts) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

class SimpleLockInterop : public ::testing::TestWithParam<PeerKind> {
 protected:
  void SetUp() override {
    static const std::string missing = missing_peers();
    ASSERT_TRUE(missing.empty()) << "interop peers are not installed:\n" << missing;
  }
  PeerKind kind() const { return GetParam(); }
};

// The peer's TTL is 30 s and distlock waits 10 s: only the poll cap explains
// distlock getting in once the peer releases without publishing.
TEST_P(SimpleLockInterop, APeersHoldExcludesDistlockWhichPicksUpItsUnpublishedReleaseByPolling) {
  RedisServer server;
  Client client(options_for(server));
  Peer peer(kind(), server, "shared", "hold", {"30000"});
  const auto token = peer.line("acquired ");
  ASSERT_TRUE(token) << peer_name(kind()) << " did not acquire; output:\n" << peer.seen();
  EXPECT_EQ(value_of(client, "shared"), *token) << "the peer's key is the lock's name";
  SimpleLock lock = client.simple_lock("shared");
  EXPECT_FALSE(lock.try_lock());
  EXPECT_FALSE(lock.try_acquire().has_value());
  const long long before = evalsha_calls(client);
  auto waited = std::async(std::launch::async, [&] {
    const auto start = std::chrono::steady_clock::now();
    const bool got = lock.try_lock_for(10s);
    const auto took = std::chrono::steady_clock::now() - start;
    const std::string value = value_of(client, "shared");
    if (got) lock.unlock();
    return std::tuple{got, took, value};
  });
  ASSERT_TRUE(waiter_subscribed(client, "shared"));
  EXPECT_TRUE(polled(client, before, 4)) << "distlock does not poll the peer's 30 s key";
  client.command("SET", "shared:go", "1");
  ASSERT_TRUE(peer.line("released")) << peer.seen();
  const auto [got, took, value] = waited.get();
  EXPECT_TRUE(got) << "the peer's release was not picked up within 10 s";
  EXPECT_NE(value, *token);
  std::cout << peer_name(kind()) << ": distlock got in "
            << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
            << " ms after it began to wait\n";
  EXPECT_TRUE(peer.exits_cleanly());
}

TEST_P(SimpleLockInterop, ADistlockHoldExcludesThePeerUntilItsUnlock) {
  RedisServer server;
  Client client(options_for(server));
  SimpleLock lock = client.simple_lock("shared");
  lock.lock();
  const std::string token = value_of(client, "shared");
  {
    Peer peer(kind(), server, "shared", "try", {"5000"});
    EXPECT_TRUE(peer.line("busy")) << peer_name(kind()) << " got in; output:\n" << peer.seen();
    EXPECT_TRUE(peer.exits_cleanly());
  }
  EXPECT_EQ(value_of(client, "shared"), token);
  lock.unlock();
  Peer peer(kind(), server, "shared", "try", {"5000"});
  EXPECT_TRUE(peer.line("got")) << peer.seen();
  EXPECT_TRUE(peer.exits_cleanly());
}

TEST_P(SimpleLockInterop, ThePeersLateUnlockLeavesDistlocksKey) {
  RedisServer server;
  Client client(options_for(server));
  Peer peer(kind(), server, "late", "late", {"300"});
  ASSERT_TRUE(peer.line("acquired ")) << peer.seen();
  SimpleLock lock = client.simple_lock("late");
  ASSERT_TRUE(lock.try_lock_for(10s)) << "the peer's 300 ms key never expired";
  const std::string token = value_of(client, "late");
  EXPECT_TRUE(peer.line("unlock refused")) << peer.seen();
  EXPECT_EQ(value_of(client, "late"), token) << "the peer deleted distlock's key";
  EXPECT_TRUE(lock.is_held_by_current_thread());
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(peer.exits_cleanly());
}

TEST_P(SimpleLockInterop, DistlocksLateUnlockIsLeaseLostAndLeavesThePeersKey) {
  RedisServer server;
  Client client(options_for(server));
  SimpleLock lock = client.simple_lock("late");
  lock.lock(300ms);
  Peer peer(kind(), server, "late", "hold", {"30000"});
  const auto token = peer.line("acquired ");
  ASSERT_TRUE(token) << "the peer never got the key after distlock's 300 ms lease; output:\n"
                     << peer.seen();
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
  EXPECT_EQ(value_of(client, "late"), *token) << "distlock deleted the peer's key";
  client.command("SET", "late:go", "1");
  EXPECT_TRUE(peer.line("released")) << peer.seen();
  EXPECT_TRUE(peer.exits_cleanly());
}

std::string peer_test_name(const ::testing::TestParamInfo<PeerKind>& p) {
  return p.param == PeerKind::redlock ? "NodeRedlock" : "RedisPy";
}

INSTANTIATE_TEST_SUITE_P(Peers,
                         SimpleLockInterop,
                         ::testing::Values(PeerKind::redlock, PeerKind::redis_py),
                         peer_test_name);

// distlock threads on two Clients, a node redlock process and a redis-py
// process increment one counter by GET and SET under the lock at once: the
// distlock threads keep going until both peers are done, so every peer round
// runs while distlock contends.
TEST(SimpleLockInteropMixed, ACounterIncrementedByDistlockRedlockAndRedisPyAtOnceIsExact) {
  const std::string missing = missing_peers();
  ASSERT_TRUE(missing.empty()) << "interop peers are not installed:\n" << missing;
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  constexpr int kPeerRounds = 100;
  constexpr int kThreads = 4;
  constexpr int kMinThreadRounds = 50;
  const std::vector<std::string> count = {"10000", "counter", std::to_string(kPeerRounds)};
  Peer node(PeerKind::redlock, server, "mixed", "count", count);
  Peer python(PeerKind::redis_py, server, "mixed", "count", count);
  std::atomic<bool> peers_done{false};
  std::atomic<int> distlock_rounds{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Client& c = t % 2 == 0 ? a : b;
      SimpleLock lock = c.simple_lock("mixed");
      for (int i = 0; i < kMinThreadRounds || !peers_done; ++i) {
        ASSERT_TRUE(lock.try_lock_for(60s));
        const Value v = c.command("GET", "counter");
        const int n = v.is_nil() ? 0 : std::stoi(v.as_string());
        c.command("SET", "counter", std::to_string(n + 1));
        lock.unlock();
        ++distlock_rounds;
        // Work outside the lock, so the polling peers find it free at times.
        std::this_thread::sleep_for(2ms);
      }
    });
  }
  const bool node_done = node.line("done", 120s).has_value();
  const bool python_done = python.line("done", 120s).has_value();
  peers_done = true;
  for (auto& t : threads) t.join();
  ASSERT_TRUE(node_done) << node.seen();
  ASSERT_TRUE(python_done) << python.seen();
  std::cout << "distlock rounds " << distlock_rounds << ", redlock " << kPeerRounds << ", redis-py "
            << kPeerRounds << "\n";
  EXPECT_EQ(value_of(a, "counter"), std::to_string(2 * kPeerRounds + distlock_rounds));
  EXPECT_TRUE(node.exits_cleanly());
  EXPECT_TRUE(python.exits_cleanly());
}

}  // namespace
}  // namespace distlock
