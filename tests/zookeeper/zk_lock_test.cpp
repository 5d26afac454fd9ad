// The ZooKeeper lock's own behaviour (issue 28), on real ensembles: Curator's
// node layout, one waiter woken per release through a watch on its
// predecessor only, the holder told when its node is deleted, and what the
// backend refuses (not_supported, before any I/O) or rejects.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <regex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "distlock/client.hpp"
#include "distlock/fair_lock.hpp"
#include "distlock/fencing.hpp"
#include "distlock/latch.hpp"
#include "distlock/multi_lock.hpp"
#include "distlock/rate_limiter.hpp"
#include "distlock/read_write_lock.hpp"
#include "distlock/redlock.hpp"
#include "distlock/semaphore.hpp"
#include "distlock/simple_lock.hpp"
#include "support/poll_until.hpp"
#include "support/refusing_port.hpp"
#include "support/zk_inspect.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::ZkInspector;
using test::ZooKeeperEnsemble;

class ZkLock : public testing::Test {
 protected:
  ZkLock() : ensemble_(test::with_nodes(1)), inspector_(ensemble_.connect_string()) {}
  std::string uri(const std::string& extra = "") const {
    return "zookeeper://" + ensemble_.connect_string() + "/app" + extra;
  }

  ZooKeeperEnsemble ensemble_;
  ZkInspector inspector_;
};

TEST_F(ZkLock, TheHoldersNodeIsCuratorsProtectedEphemeralSequentialInTheChrootedDirectory) {
  Client client(uri());
  Lock lock = client.lock("orders/eu");
  lock.lock();
  const auto queue = inspector_.queue("/app/orders/eu");
  ASSERT_EQ(queue.size(), 1u);
  static const std::regex curator(
      "_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-[0-9]{10}");
  EXPECT_TRUE(std::regex_match(queue.front(), curator)) << queue.front();
  const auto data = inspector_.data("/app/orders/eu/" + queue.front());
  ASSERT_TRUE(data.has_value());
  EXPECT_EQ(data->rfind(client.id() + ":", 0), 0u) << "the node's data names its owner: " << *data;
  lock.unlock();
  EXPECT_TRUE(inspector_.queue("/app/orders/eu").empty());
  // "/x" and "x" name one lock.
  Lease lease = client.lock("/orders/eu").acquire();
  EXPECT_EQ(inspector_.queue("/app/orders/eu").size(), 1u);
}

TEST_F(ZkLock, AFencedTokenIsTheHoldersNodeCzxid) {
  Client client(uri());
  Lease lease = client.fenced_lock("ledger").acquire();
  const auto queue = inspector_.queue("/app/ledger");
  ASSERT_EQ(queue.size(), 1u);
  const auto czxid = inspector_.czxid("/app/ledger/" + queue.front());
  ASSERT_TRUE(czxid.has_value());
  ASSERT_TRUE(lease.fencing_token().has_value());
  EXPECT_EQ(*lease.fencing_token(), static_cast<std::uint64_t>(*czxid));
}

TEST_F(ZkLock, TokensStillIncreaseAfterTheLockDirectoryIsDeletedAndMadeAgain) {
  Client client(uri());
  Lock lock = client.fenced_lock("recreated");
  lock.lock();
  const std::uint64_t first = *lock.fencing_token();
  lock.unlock();
  // The directory (a container) goes; its next node's sequence restarts at
  // 0000000000, but a czxid never goes back.
  ASSERT_TRUE(inspector_.remove("/app/recreated"));
  lock.lock();
  const auto queue = inspector_.queue("/app/recreated");
  ASSERT_EQ(queue.size(), 1u);
  EXPECT_NE(queue.front().find("lock-0000000000"), std::string::npos) << queue.front();
  EXPECT_GT(*lock.fencing_token(), first);
  lock.unlock();
}

TEST_F(ZkLock, EightWaitersAreWokenInQueueOrderEachWatchingOnlyItsPredecessor) {
  constexpr int kWaiters = 8;
  Client holder_client(uri());
  Lease holder = holder_client.lock("queue").acquire();
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<std::thread> threads;
  std::mutex mutex;
  std::vector<int> order;
  for (int i = 0; i < kWaiters; ++i) {
    clients.push_back(std::make_unique<Client>(uri()));
    threads.emplace_back([&, i] {
      Lock lock = clients[static_cast<std::size_t>(i)]->lock("queue");
      lock.lock();
      {
        std::lock_guard guard(mutex);
        order.push_back(i);
      }
      lock.unlock();
    });
    // Queue them in a known order: the next starts once this one's node is in.
    ASSERT_TRUE(test::poll_until(
        [&] { return inspector_.queue("/app/queue").size() == static_cast<std::size_t>(i + 2); },
        std::chrono::steady_clock::now() + 30s));
  }
  const auto queue = inspector_.queue("/app/queue");
  // Every waiter has set its watch once wchp lists 9 watched nodes' worth:
  // the holder watches its own node (to hear of a deletion), waiter i the
  // node before its own; the last node and the directory are not watched.
  std::map<std::string, int> watched;
  ASSERT_TRUE(test::poll_until(
      [&] {
        watched.clear();
        int total = 0;
        for (const auto& [path, sessions] : test::parse_wchp(ensemble_.four_letter(0, "wchp"))) {
          watched[path] = sessions;
          total += sessions;
        }
        return total == kWaiters + 1;
      },
      std::chrono::steady_clock::now() + 30s));
  EXPECT_EQ(watched.count("/app/queue"), 0u) << "a child watch on the directory wakes every waiter";
  EXPECT_EQ(watched["/app/queue/" + queue[0]], 2) << "the holder's own watch and waiter 0's";
  for (int i = 1; i < kWaiters; ++i) {
    EXPECT_EQ(watched["/app/queue/" + queue[static_cast<std::size_t>(i)]], 1)
        << "node " << i << " must be watched by its successor only";
  }
  EXPECT_EQ(watched.count("/app/queue/" + queue.back()), 0u);
  holder.release();
  for (auto& t : threads) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(inspector_.queue("/app/queue").empty());
}

TEST_F(ZkLock, DeletingTheHoldersNodeLosesItsLeaseAsTaken) {
  std::promise<LeaseLostEvent::Reason> reported;
  std::atomic<bool> once{false};
  ClientOptions o = ClientOptions::from_uri(uri());
  o.on_lease_lost = [&](const LeaseLostEvent& e) {
    if (!once.exchange(true)) reported.set_value(e.reason);
  };
  Client client(o);
  Lease lease = client.lock("taken").acquire();
  std::promise<void> stopped;
  std::stop_callback on_stop(lease.stop_token(), [&] { stopped.set_value(); });
  const auto queue = inspector_.queue("/app/taken");
  ASSERT_EQ(queue.size(), 1u);
  ASSERT_TRUE(inspector_.remove("/app/taken/" + queue.front()));
  ASSERT_EQ(stopped.get_future().wait_for(30s), std::future_status::ready)
      << "the holder was not told its node is gone";
  EXPECT_EQ(reported.get_future().get(), LeaseLostEvent::Reason::taken);
  EXPECT_FALSE(lease.valid());
  std::error_code ec;
  lease.release(ec);
  EXPECT_EQ(ec, errc::lease_lost) << ec.message();
}

TEST_F(ZkLock, ForceUnlockHandsTheLockToTheNextWaiterAndTellsTheHolder) {
  Client a(uri());
  Client b(uri());
  Client c(uri());
  Lease held = a.lock("forced").acquire();
  std::promise<bool> got;
  std::thread waiter([&] {
    Lock l = b.lock("forced");
    got.set_value(l.try_lock_for(60s));
    l.unlock();
  });
  ASSERT_TRUE(test::poll_until([&] { return inspector_.queue("/app/forced").size() == 2; },
                               std::chrono::steady_clock::now() + 30s));
  EXPECT_TRUE(c.lock("forced").force_unlock());
  auto future = got.get_future();
  ASSERT_EQ(future.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(future.get());
  waiter.join();
  EXPECT_TRUE(test::poll_until([&] { return held.stop_token().stop_requested(); },
                               std::chrono::steady_clock::now() + 30s));
}

TEST_F(ZkLock, WhatZooKeeperLacksFailsWithNotSupportedNamingIt) {
  Client client(uri());
  auto expect_unsupported = [](auto&& make, const char* what) {
    try {
      make();
      ADD_FAILURE() << what << " did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), errc::not_supported) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("ZooKeeper"), std::string::npos) << e.what();
    }
  };
  expect_unsupported([&] { (void)client.fair_lock("x"); }, "fair_lock");
  expect_unsupported([&] { (void)client.fenced_fair_lock("x"); }, "fenced_fair_lock");
  expect_unsupported([&] { (void)client.read_write_lock("x"); }, "read_write_lock");
  expect_unsupported([&] { (void)client.simple_lock("x"); }, "simple_lock");
  expect_unsupported([&] { (void)client.latch("x"); }, "latch");
  expect_unsupported([&] { (void)client.rate_limiter("x"); }, "rate_limiter");
  expect_unsupported([&] { (void)client.semaphore("x"); }, "semaphore");
  expect_unsupported([&] { (void)client.lock("x", LockOptions{std::chrono::seconds(1)}); },
                     "lock_delay");
  Lock lock = client.lock("x");
  expect_unsupported([&] { lock.lock(10s); }, "a fixed lease");
  std::error_code ec;
  EXPECT_FALSE(lock.try_acquire_for(1s, 5000ms, ec).has_value());
  EXPECT_EQ(ec, errc::not_supported);
  EXPECT_FALSE(lock.is_locked()) << "a refused acquire left a node";
  expect_unsupported([&] { MultiLock({lock}); }, "MultiLock");
  EXPECT_THROW(client.command("PING"), Error);
  client.command(std::vector<std::string_view>{"PING"}, ec);
  EXPECT_EQ(ec, errc::not_supported);
  EXPECT_FALSE(fenced_set(client, "k", "v", 1, ec));
  EXPECT_EQ(ec, errc::not_supported);
  try {
    RedlockGroup group({uri()});
    ADD_FAILURE() << "RedlockGroup over ZooKeeper";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::not_supported) << e.what();
  }
}

TEST_F(ZkLock, LockNamesThatAreNoZooKeeperPathAreInvalidArgument) {
  Client client(uri());
  for (const char* bad : {"a//b", "a/", "a/./b", "../x", "", "ctl\x01x"}) {
    try {
      (void)client.lock(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument) << e.what();
    }
  }
  Client rooted("zookeeper://" + ensemble_.connect_string());
  EXPECT_THROW((void)rooted.lock("zookeeper/quota"), Error) << "ZooKeeper's own tree";
  EXPECT_NO_THROW((void)rooted.lock("zookeeper-jobs"));
}

TEST(ZkClient, AnUnreachableEnsembleFailsWithConnectionFailedNamingItsServers) {
  test::RefusingPort refusing;
  const std::string hosts = "127.0.0.1:" + std::to_string(refusing.port());
  try {
    Client client("zookeeper://user:s3cret-pw@" + hosts + "/app?connect_timeout_ms=500");
    ADD_FAILURE() << "connected to nothing";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::connection_failed) << e.what();
    EXPECT_NE(std::string(e.what()).find(hosts), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("s3cret-pw"), std::string::npos) << e.what();
  }
}

TEST_F(ZkLock, AClosedClientsLocksFailWithClosedAndItsHoldingsAreGone) {
  Client other(uri());
  auto client = std::make_unique<Client>(uri());
  Lock lock = client->lock("closing");
  lock.lock();
  Lease lease = client->lock("closing-lease").acquire();
  client->close();
  EXPECT_TRUE(lease.stop_token().stop_requested());
  EXPECT_FALSE(lease.valid());
  std::error_code ec;
  lock.lock(ec);
  EXPECT_EQ(ec, errc::closed) << ec.message();
  // The session ended with close(): its nodes are gone at once.
  EXPECT_TRUE(other.lock("closing").try_lock());
  EXPECT_TRUE(other.lock("closing-lease").try_acquire().has_value());
  client.reset();  // the Lock handle outlives its Client safely
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::not_owner) << ec.message();
}

}  // namespace
}  // namespace distlock
