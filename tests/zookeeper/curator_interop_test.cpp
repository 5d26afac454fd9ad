// distlock and Apache Curator as real peers on one ZooKeeper lock (issue
// 28): a Curator InterProcessMutex process (tests/interop/curator, Debian's
// libcurator-recipes-java) and distlock's ZooKeeper lock on the same path
// exclude each other, each one's waiter is woken by the other's release, and
// a counter both increment under the lock ends exact.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "distlock/client.hpp"
#include "support/curator_peer.hpp"
#include "support/poll_until.hpp"
#include "support/zk_inspect.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::CuratorPeer;
using test::ZkInspector;
using test::ZooKeeperEnsemble;

class CuratorInterop : public testing::Test {
 protected:
  CuratorInterop() : ensemble_(test::with_nodes(1)), inspector_(ensemble_.connect_string()) {}
  // distlock's lock "mix" under the chroot /app is Curator's path /app/mix.
  std::string uri() const { return "zookeeper://" + ensemble_.connect_string() + "/app"; }
  ~CuratorInterop() override {
    std::error_code ignored;
    std::filesystem::remove_all(scratch_, ignored);
  }
  // How many sessions watch `node` (a full path).
  int watchers(const std::string& node) {
    for (const auto& [path, sessions] : test::parse_wchp(ensemble_.four_letter(0, "wchp"))) {
      if (path == node) return sessions;
    }
    return 0;
  }
  bool watched(const std::string& node) { return watchers(node) > 0; }
  // A file in a scratch directory of this test.
  std::string scratch_file(const std::string& name) {
    if (scratch_.empty()) {
      std::string pattern =
          (std::filesystem::temp_directory_path() / "distlock-curator-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      scratch_ = pattern;
    }
    return (std::filesystem::path(scratch_) / name).string();
  }

  ZooKeeperEnsemble ensemble_;
  ZkInspector inspector_;
  std::string scratch_;
};

TEST_F(CuratorInterop, CuratorHoldsDistlockWaitsAndCuratorsReleaseWakesIt) {
  CuratorPeer curator(ensemble_.connect_string(), {"hold", "/app/mix"});
  curator.expect_line("CONNECTED");
  const std::string curator_node = curator.expect_line("ACQUIRED ").substr(9);
  Client client(uri());
  Lock lock = client.lock("mix");
  EXPECT_FALSE(lock.try_lock()) << "distlock took a lock Curator holds";
  std::promise<bool> got;
  std::thread waiter([&] {
    got.set_value(lock.try_lock_for(60s));
    lock.unlock();
  });
  // Queued behind Curator's node and watching it: then Curator releases.
  ASSERT_TRUE(test::poll_until(
      [&] { return inspector_.queue("/app/mix").size() == 2 && watched(curator_node); },
      std::chrono::steady_clock::now() + 30s));
  auto future = got.get_future();
  EXPECT_EQ(future.wait_for(0s), std::future_status::timeout);
  curator.send("release");
  curator.expect_line("RELEASED");
  ASSERT_EQ(future.wait_for(30s), std::future_status::ready) << "Curator's release did not wake it";
  EXPECT_TRUE(future.get());
  waiter.join();
}

TEST_F(CuratorInterop, DistlockHoldsCuratorWaitsAndDistlocksReleaseWakesIt) {
  Client client(uri());
  Lock lock = client.lock("mix");
  lock.lock();
  const auto mine = inspector_.queue("/app/mix");
  ASSERT_EQ(mine.size(), 1u);
  CuratorPeer curator(ensemble_.connect_string(), {"wait", "/app/mix"});
  curator.expect_line("CONNECTED");
  curator.expect_line("WAITING");
  ASSERT_TRUE(test::poll_until(
      [&] {
        // distlock's watch of its own node, and Curator's of its predecessor
        return inspector_.queue("/app/mix").size() == 2 &&
               watchers("/app/mix/" + mine.front()) == 2;
      },
      std::chrono::steady_clock::now() + 30s));
  EXPECT_FALSE(curator.poll_line("ACQUIRED").has_value()) << "Curator took a lock distlock holds";
  lock.unlock();
  curator.expect_line("ACQUIRED ", 30s);
  curator.send("release");
  curator.expect_line("RELEASED");
}

TEST_F(CuratorInterop, ACounterIncrementedUnderTheLockByCuratorAndDistlockEndsExact) {
  constexpr int kEach = 150;
  const std::string file = scratch_file("counter");
  CuratorPeer curator(ensemble_.connect_string(),
                      {"counter", "/app/counter", file, std::to_string(kEach)});
  curator.expect_line("CONNECTED");
  Client client(uri());
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      Lock lock = client.lock("counter");
      for (int i = 0; i < kEach; ++i) {
        std::lock_guard guard(lock);
        long n = 0;
        {
          std::ifstream in(file);
          in >> n;
        }
        std::ofstream out(file, std::ios::trunc);
        out << n + 1 << "\n";
      }
    });
  }
  for (auto& t : threads) t.join();
  curator.expect_line("DONE", 120s);
  long total = 0;
  std::ifstream in(file);
  in >> total;
  EXPECT_EQ(total, 3 * kEach) << "an increment was lost: the two did not exclude each other";
}

}  // namespace
}  // namespace distlock
