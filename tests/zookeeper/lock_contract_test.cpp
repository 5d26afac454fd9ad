// The Lock contract, once, run against every backend (issues 28, 29): the
// same test body on a Redis server, a ZooKeeper ensemble, a PostgreSQL and a
// MariaDB server, through the same public API; only the URI differs. What a
// backend cannot do is not here (zk_lock_test.cpp and tests/sql/ check that
// it is refused).
#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/error.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distlock/client.hpp"
#include "distlock/lock_async.hpp"
#include "support/mariadb_server.hpp"
#include "support/postgres_server.hpp"
#include "support/redis_server.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::RedisServer;
using test::ZooKeeperEnsemble;

// One real server of a backend, started for one test.
class Deployment {
 public:
  virtual ~Deployment() = default;
  virtual Client client() const = 0;
};

class RedisDeployment final : public Deployment {
 public:
  Client client() const override { return Client(server_.uri()); }

 private:
  RedisServer server_;
};

class ZooKeeperDeployment final : public Deployment {
 public:
  ZooKeeperDeployment() : ensemble_(test::with_nodes(1)) {}
  // Built as ClientOptions (zk_lock_test.cpp uses zookeeper:// URIs).
  Client client() const override {
    ClientOptions o;
    o.backend = ClientOptions::Backend::zookeeper;
    o.seeds.push_back({"127.0.0.1", ensemble_.client_port(0)});
    o.chroot = "/contract";
    return Client(o);
  }

 private:
  ZooKeeperEnsemble ensemble_;
};

class PostgresDeployment final : public Deployment {
 public:
  Client client() const override { return Client(server_.uri()); }

 private:
  test::PostgresServer server_;
};

class MariaDbDeployment final : public Deployment {
 public:
  Client client() const override { return Client(server_.uri()); }

 private:
  test::MariaDbServer server_;
};

enum class Backend { redis, zookeeper, postgresql, mysql };

std::string backend_name(const testing::TestParamInfo<Backend>& info) {
  switch (info.param) {
    case Backend::redis:
      return "Redis";
    case Backend::zookeeper:
      return "ZooKeeper";
    case Backend::postgresql:
      return "PostgreSQL";
    case Backend::mysql:
      return "MariaDB";
  }
  return "unknown";
}

class LockContract : public testing::TestWithParam<Backend> {
 protected:
  LockContract() {
    switch (GetParam()) {
      case Backend::redis:
        deployment_ = std::make_unique<RedisDeployment>();
        break;
      case Backend::zookeeper:
        deployment_ = std::make_unique<ZooKeeperDeployment>();
        break;
      case Backend::postgresql:
        deployment_ = std::make_unique<PostgresDeployment>();
        break;
      case Backend::mysql:
        deployment_ = std::make_unique<MariaDbDeployment>();
        break;
    }
  }
  Client client() const { return deployment_->client(); }

  std::unique_ptr<Deployment> deployment_;
};

TEST_P(LockContract, ReentryCountsHoldsAndOnlyTheLastUnlockReleases) {
  Client a = client();
  Client b = client();
  Lock mine = a.lock("orders");
  Lock theirs = b.lock("orders");
  mine.lock();
  mine.lock();
  EXPECT_EQ(mine.hold_count(), 2u);
  EXPECT_TRUE(mine.is_held_by_current_thread());
  EXPECT_FALSE(theirs.try_lock());
  mine.unlock();
  EXPECT_EQ(mine.hold_count(), 1u);
  EXPECT_FALSE(theirs.try_lock()) << "one unlock of two holds released it";
  std::error_code ec;
  mine.unlock(ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(mine.hold_count(), 0u);
  EXPECT_TRUE(theirs.try_lock());
  theirs.unlock();
}

TEST_P(LockContract, AnotherThreadOfTheSameClientNeitherGetsNorReleasesIt) {
  Client a = client();
  Lock lock = a.lock("jobs");
  lock.lock();
  std::thread other([&] {
    EXPECT_FALSE(lock.try_lock());
    EXPECT_FALSE(lock.is_held_by_current_thread());
    std::error_code ec;
    lock.unlock(ec);
    EXPECT_EQ(ec, errc::not_owner) << ec.message();
  });
  other.join();
  EXPECT_TRUE(lock.is_locked()) << "another thread's unlock released it";
  lock.unlock();
  EXPECT_FALSE(lock.is_locked());
}

TEST_P(LockContract, TryLockForGivesUpAfterItsWaitAndLeavesNoPlaceBehind) {
  Client a = client();
  Client b = client();
  Lock held = a.lock("stock");
  Lock waiter = b.lock("stock");
  held.lock();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(waiter.try_lock_for(300ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms) << "gave up before its wait";
  std::error_code ec;
  EXPECT_FALSE(waiter.try_lock_for(-1ms, ec));
  EXPECT_EQ(ec, errc::invalid_argument);
  held.unlock();
  // A waiter's place (a ZooKeeper queue node) left behind would hold it.
  EXPECT_FALSE(held.is_locked());
  EXPECT_TRUE(waiter.try_lock());
  waiter.unlock();
}

TEST_P(LockContract, ALeaseMovesToAnotherThreadAndIsReleasedThere) {
  Client a = client();
  Client b = client();
  Lock lock = a.lock("batch");
  Lease lease = lock.acquire();
  ASSERT_TRUE(lease.valid());
  EXPECT_EQ(lease.name(), "batch");
  EXPECT_FALSE(lock.is_held_by_current_thread()) << "a Lease is not a thread hold";
  EXPECT_FALSE(b.lock("batch").try_acquire().has_value());
  std::thread other([l = std::move(lease)]() mutable {
    EXPECT_TRUE(l.valid());
    std::error_code ec;
    l.release(ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(l.valid());
  });
  other.join();
  EXPECT_FALSE(lock.is_locked());
  auto again = b.lock("batch").try_acquire();
  EXPECT_TRUE(again.has_value());
}

TEST_P(LockContract, AnAsyncAcquireWaitsForTheReleaseAndGetsALease) {
  Client a = client();
  Client b = client();
  Lease held = a.lock("report").acquire();
  std::promise<std::pair<std::error_code, Lease>> got;
  b.lock("report").async_acquire([&](std::error_code ec, Lease l) {
    got.set_value({ec, std::move(l)});
  });
  auto future = got.get_future();
  EXPECT_EQ(future.wait_for(200ms), std::future_status::timeout) << "acquired while held";
  held.release();
  // Redis's fallback (the holder's 30 s watchdog TTL) is longer than this.
  ASSERT_EQ(future.wait_for(20s), std::future_status::ready) << "the release did not wake it";
  auto [ec, lease] = future.get();
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(lease.valid());
}

TEST_P(LockContract, ACancelledAsyncAcquireEndsAbortedAndLeavesNothing) {
  Client a = client();
  Client b = client();
  Lock lock = a.lock("cancel-me");
  lock.lock();
  asio::cancellation_signal cancel;
  std::promise<std::pair<std::error_code, bool>> got;
  b.lock("cancel-me")
      .async_acquire(asio::bind_cancellation_slot(cancel.slot(), [&](std::error_code ec, Lease l) {
        got.set_value({ec, l.valid()});
      }));
  auto future = got.get_future();
  EXPECT_EQ(future.wait_for(200ms), std::future_status::timeout);
  cancel.emit(asio::cancellation_type::terminal);
  ASSERT_EQ(future.wait_for(20s), std::future_status::ready);
  auto [ec, valid] = future.get();
  EXPECT_EQ(ec, asio::error::operation_aborted) << ec.message();
  EXPECT_FALSE(valid);
  lock.unlock();
  EXPECT_FALSE(lock.is_locked()) << "the cancelled waiter left its place";
}

TEST_P(LockContract, FencingTokensStrictlyIncreaseAcrossHoldersAndClients) {
  Client a = client();
  Client b = client();
  Lock on_a = a.fenced_lock("ledger");
  Lock on_b = b.fenced_lock("ledger");
  ASSERT_TRUE(on_a.fenced());
  std::uint64_t last = 0;
  for (int i = 0; i < 6; ++i) {
    Lock& l = i % 2 == 0 ? on_a : on_b;
    if (i % 3 == 0) {
      Lease lease = l.acquire();
      ASSERT_TRUE(lease.fencing_token().has_value());
      EXPECT_GT(*lease.fencing_token(), last);
      last = *lease.fencing_token();
    } else {
      l.lock();
      ASSERT_TRUE(l.fencing_token().has_value());
      EXPECT_GT(*l.fencing_token(), last);
      last = *l.fencing_token();
      l.unlock();
    }
  }
  Lock plain = a.lock("ledger-plain");
  plain.lock();
  EXPECT_FALSE(plain.fencing_token().has_value()) << "a plain lock hands out no token";
  plain.unlock();
}

TEST_P(LockContract, AHolderSeesItsLeaseValidWithAStopTokenNotRequested) {
  Client a = client();
  Lock lock = a.lock("lease-view");
  EXPECT_FALSE(lock.lease_valid());
  EXPECT_FALSE(lock.lease_deadline().has_value());
  lock.lock();
  EXPECT_TRUE(lock.lease_valid());
  EXPECT_FALSE(lock.stop_token().stop_requested());
  ASSERT_TRUE(lock.lease_deadline().has_value());
  EXPECT_GT(*lock.lease_deadline(), std::chrono::steady_clock::now());
  auto ttl = lock.remaining_ttl();
  ASSERT_TRUE(ttl.has_value());
  EXPECT_GT(*ttl, 0ms);
  lock.unlock();
  EXPECT_FALSE(lock.remaining_ttl().has_value());
}

TEST_P(LockContract, ForceUnlockFreesItForTheNextHolder) {
  Client a = client();
  Client b = client();
  Lease lease = a.lock("stuck").acquire();
  Lock other = b.lock("stuck");
  EXPECT_TRUE(other.force_unlock());
  EXPECT_FALSE(other.force_unlock()) << "nothing left to force";
  EXPECT_TRUE(other.try_lock());
  other.unlock();
}

TEST_P(LockContract, StdUniqueLockAndScopedLockWorkUnchanged) {
  Client a = client();
  Lock lock = a.lock("raii");
  {
    std::unique_lock<Lock> guard(lock, std::defer_lock);
    EXPECT_TRUE(guard.try_lock_for(1s));
    EXPECT_TRUE(lock.is_held_by_current_thread());
  }
  EXPECT_FALSE(lock.is_locked());
  {
    std::scoped_lock guard(lock);
    EXPECT_TRUE(lock.is_locked());
  }
  EXPECT_FALSE(lock.is_locked());
}

INSTANTIATE_TEST_SUITE_P(
    Backends,
    LockContract,
    testing::Values(Backend::redis, Backend::zookeeper, Backend::postgresql, Backend::mysql),
    backend_name);

}  // namespace
}  // namespace distlock
