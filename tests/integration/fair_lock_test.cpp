// The fair lock (issue 11, item 1) against real redis-server processes:
// reentry, FIFO order across Clients, handoff by grant, waiter liveness.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/history.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

std::string queue_of(const std::string& name) {
  return "redisson_lock_queue:{" + name + "}";
}

// How many waiters the server has queued for `name`.
long long queued(Client& c, const std::string& name) {
  return c.command("LLEN", queue_of(name)).as_integer();
}

// Waits until the server shows `n` waiters queued for `name`.
void await_queued(Client& c, const std::string& name, long long n) {
  ASSERT_TRUE(eventually([&] { return queued(c, name) == n; }, 30s))
      << "expected " << n << " waiters queued, the server shows " << queued(c, name);
}

// Waits until a waiter that started after `before` script calls has made its
// attempt after subscribing (the first attempt queues it, the subscription's
// confirmation triggers the second): from then on only a message, or a
// fallback, can hand it the lock. Every Client of the test needs a long
// watchdog lease: a renewal is a script call too.
void await_settled(Client& c, long long before) {
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(c) >= before + 2; }, 30s))
      << "the waiter did not make its attempt after subscribing";
}

TEST(FairLock, ReentryCountsAndOnlyTheLastUnlockFreesIt) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.fair_lock("fair-reentry");
  lock.lock();
  lock.lock();
  EXPECT_EQ(lock.hold_count(), 2u);
  lock.unlock();
  EXPECT_TRUE(lock.is_locked());
  EXPECT_EQ(lock.hold_count(), 1u);
  lock.unlock();
  EXPECT_FALSE(lock.is_locked());
}

TEST(FairLock, AnotherThreadOfTheSameHandleIsNotTheOwner) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.fair_lock("fair-thread");
  lock.lock();
  std::async(std::launch::async, [&] {
    EXPECT_FALSE(lock.is_held_by_current_thread());
    EXPECT_FALSE(lock.try_lock());
    std::error_code ec;
    lock.unlock(ec);
    EXPECT_EQ(ec, errc::not_owner);
  }).get();
  EXPECT_TRUE(lock.is_held_by_current_thread());
  lock.unlock();
}

TEST(FairLock, EightWaitersOnFourClientsGetItInArrivalOrder) {
  RedisServer server;
  const std::string name = "fair-order";
  Client holder(options_for(server));
  std::vector<std::unique_ptr<Client>> clients;
  for (int c = 0; c < 4; ++c) clients.push_back(std::make_unique<Client>(options_for(server)));
  Lock held = holder.fair_lock(name);
  held.lock();
  std::mutex m;
  std::vector<int> order;
  std::vector<std::future<bool>> waiters;
  for (int i = 0; i < 8; ++i) {
    Lock lock = clients[static_cast<std::size_t>(i % 4)]->fair_lock(name);
    waiters.push_back(std::async(std::launch::async, [lock, i, &m, &order]() mutable {
      if (!lock.try_lock_for(60s)) return false;
      {
        std::lock_guard g(m);
        order.push_back(i);
      }
      lock.unlock();
      return true;
    }));
    // Staggered: the next one arrives once this one is visibly queued.
    await_queued(holder, name, i + 1);
  }
  held.unlock();
  for (auto& w : waiters) EXPECT_TRUE(w.get());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(queued(holder, name), 0);
}

TEST(FairLock, AChainOfFixedLeasesThatExpireWithoutUnlockingHandsOnInOrder) {
  RedisServer server;
  const std::string name = "fair-chain";
  Client a(options_for(server));
  Client b(options_for(server));
  Lock first = a.fair_lock(name);
  ASSERT_TRUE(first.try_lock_for(0ms, 300ms));
  std::mutex m;
  std::vector<int> order;
  std::vector<std::future<std::optional<Lease>>> waiters;
  for (int i = 0; i < 4; ++i) {
    Lock lock = (i % 2 ? a : b).fair_lock(name);
    waiters.push_back(std::async(std::launch::async, [lock, i, &m, &order]() mutable {
      auto lease = lock.try_acquire_for(60s, 300ms);
      if (lease) {
        std::lock_guard g(m);
        order.push_back(i);
      }
      return lease;  // kept, never released: each lease runs out on its own
    }));
    await_queued(a, name, i + 1);
  }
  std::vector<Lease> leases;
  for (auto& w : waiters) {
    auto lease = w.get();
    ASSERT_TRUE(lease.has_value());
    leases.push_back(std::move(*lease));
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(FairLock, AWaiterGetsTheLockRightAfterAnUnlockNotOnExpiry) {
  RedisServer server;
  Client a(options_for(server, 10min));
  Client b(options_for(server, 10min));
  Lock held = a.fair_lock("fair-handoff");
  held.lock(10min);  // only the handoff can explain a waiter getting in
  Lock waiter = b.fair_lock("fair-handoff");
  const long long before = test::evalsha_calls(a);
  auto got = std::async(std::launch::async, [&] {
    // The watchdog lease: taken from the grant. Its wait outlasts the bound
    // below, so no last attempt at its deadline can explain getting in.
    const bool in = waiter.try_lock_for(10min);
    if (in) waiter.unlock();
    return in;
  });
  await_queued(a, "fair-handoff", 1);
  await_settled(a, before);
  held.unlock();
  const bool handed = got.wait_for(30s) == std::future_status::ready;
  if (!handed) b.close();  // ends the wait (it then throws closed)
  ASSERT_TRUE(handed) << "the unlock did not hand the lock to the waiter";
  EXPECT_TRUE(got.get());
}

TEST(FairLock, AWaiterWithAFixedLeaseGetsItAfterAnUnlockWithItsOwnLease) {
  RedisServer server;
  Client a(options_for(server, 2s));
  Client b(options_for(server, 2s));
  Lock held = a.fair_lock("fair-fixed");
  held.lock(10min);
  Lock waiter = b.fair_lock("fair-fixed");
  auto got = std::async(std::launch::async, [&] {
    auto lease = waiter.try_acquire_for(10min, 5min);
    return lease ? std::optional<std::chrono::milliseconds>(
                       b.fair_lock("fair-fixed").remaining_ttl().value_or(0ms))
                 : std::nullopt;
  });
  await_queued(a, "fair-fixed", 1);
  held.unlock();
  const bool handed = got.wait_for(30s) == std::future_status::ready;
  if (!handed) b.close();  // ends the wait (it then throws closed)
  ASSERT_TRUE(handed) << "the unlock did not hand the lock to the waiter";
  const auto ttl = got.get();
  ASSERT_TRUE(ttl.has_value()) << "the waiter did not get the lock after the unlock";
  // The grant's TTL is the waiter's liveness (2 s); the waiter's own lease
  // (5 min) replaced it before the acquire returned.
  EXPECT_GT(*ttl, 1min);
}

TEST(FairLock, ATimedOutWaiterNeverBlocksAFreeLock) {
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  Client c(options_for(server));
  Lock held = a.fair_lock("fair-timeout");
  held.lock();
  EXPECT_FALSE(b.fair_lock("fair-timeout").try_lock_for(100ms));
  // It left the queue (its place, renewed for 30 s, would block the lock).
  EXPECT_TRUE(eventually([&] { return queued(a, "fair-timeout") == 0; }, 10s));
  held.unlock();
  Lock late = c.fair_lock("fair-timeout");
  EXPECT_TRUE(late.try_lock());
  late.unlock();
}

// Every fallback is longer than the 20 s bound: the holder's lease, the live
// waiter's liveness and its wait are 10 min. Only a grant to the dead head
// that lapses with the head's 5 s liveness lets the live waiter in (a grant
// with a fixed TTL, such as the releaser's lease, keeps it out).
TEST(FairLock, ASigkilledHeadWaiterIsSkippedWithinItsLivenessLease) {
  RedisServer server;
  const std::string name = "fair-killed";
  Client a(options_for(server, 10min));
  Client b(options_for(server, 10min));
  Lock held = a.fair_lock(name);
  held.lock();
  // The head waiter: another process whose Client renews its place every
  // third of 5 s.
  auto worker =
      test::ChildProcess::spawn({DISTLOCK_LOCK_WORKER, "fair-wait", server.uri(), name, "5000"});
  await_queued(a, name, 1);
  const std::string dead = a.command("LINDEX", queue_of(name), 0).as_string();
  Lock waiter = b.fair_lock(name);
  auto got = std::async(std::launch::async, [&] {
    const bool in = waiter.try_lock_for(10min);
    if (in) waiter.unlock();
    return in;
  });
  await_queued(a, name, 2);
  worker.kill_and_reap();
  held.unlock();  // its place has seconds left: the grant goes to the dead head
  EXPECT_EQ(a.command("HEXISTS", name, dead).as_integer(), 1) << "the dead head was not granted it";
  const bool in_time = got.wait_for(20s) == std::future_status::ready;
  if (!in_time) b.close();  // ends the wait (it then throws closed)
  ASSERT_TRUE(in_time) << "the grant to the dead head did not lapse with its liveness";
  EXPECT_TRUE(got.get());
}

TEST(FairLock, ADeadHeadWaiterIsDroppedWhenTheHoldersLeaseRunsOutWithoutAnUnlock) {
  // No release grants anything here: only the acquire script's purge of
  // waiters whose place was not renewed can let the live waiter past the
  // dead head.
  RedisServer server;
  const std::string name = "fair-dead-head";
  Client a(options_for(server));
  Client b(options_for(server));
  Lock held = a.fair_lock(name);
  held.lock(1500ms);  // never unlocked: it simply runs out
  auto worker =
      test::ChildProcess::spawn({DISTLOCK_LOCK_WORKER, "fair-wait", server.uri(), name, "1000"});
  await_queued(a, name, 1);
  Lock waiter = b.fair_lock(name);
  auto got = std::async(std::launch::async, [&] {
    const bool in = waiter.try_lock_for(60s);
    if (in) waiter.unlock();
    return in;
  });
  await_queued(a, name, 2);
  worker.kill_and_reap();
  EXPECT_TRUE(got.get()) << "the dead head kept the live waiter out";
}

TEST(FairLock, ALateUnlockAfterExpiryIsLeaseLostAndLeavesTheNewHolderAlone) {
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  Lock first = a.fair_lock("fair-late");
  first.lock(200ms);
  Lock second = b.fair_lock("fair-late");
  auto next = std::async(std::launch::async, [&] { return second.try_acquire_for(60s); });
  auto lease = next.get();
  ASSERT_TRUE(lease.has_value());
  std::error_code ec;
  first.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
  EXPECT_TRUE(first.is_locked()) << "the new holder keeps it";
  EXPECT_EQ(a.command("HLEN", "fair-late").as_integer(), 1);
  lease->release();
  EXPECT_FALSE(first.is_locked());
}

// Fallbacks (the holder's lease, the waiter's liveness and wait) of 10 min,
// a bound of 20 s: only the grant's message lets the waiter in.
TEST(FairLock, AGrantCarriesAFencingTokenAboveThePreviousHolders) {
  RedisServer server;
  Client a(options_for(server, 10min));
  Client b(options_for(server, 10min));
  Lock first = a.fenced_fair_lock("fair-fenced");
  first.lock();
  const auto t1 = first.fencing_token();
  ASSERT_TRUE(t1.has_value());
  Lock second = b.fenced_fair_lock("fair-fenced");
  const long long before = test::evalsha_calls(a);
  auto next = std::async(std::launch::async, [&] {
    auto lease = second.try_acquire_for(10min);
    return lease ? lease->fencing_token() : std::nullopt;
  });
  await_queued(a, "fair-fenced", 1);
  await_settled(a, before);
  first.unlock();
  const bool granted = next.wait_for(20s) == std::future_status::ready;
  if (!granted) b.close();  // ends the wait (it then throws closed)
  ASSERT_TRUE(granted) << "the grant did not reach the waiter";
  const auto t2 = next.get();
  ASSERT_TRUE(t2.has_value());
  EXPECT_GT(*t2, *t1);
}

// As above: 10 min fallbacks, a 20 s bound; the async op must act on the
// grant's message.
TEST(FairLock, AsyncAcquireWaitsInLineAndGetsTheGrant) {
  RedisServer server;
  Client a(options_for(server, 10min));
  Client b(options_for(server, 10min));
  Lock held = a.fair_lock("fair-async");
  held.lock();
  const long long before = test::evalsha_calls(a);
  auto pending = b.fair_lock("fair-async").async_acquire(asio::use_future);
  await_queued(a, "fair-async", 1);
  await_settled(a, before);
  held.unlock();
  const bool granted = pending.wait_for(20s) == std::future_status::ready;
  if (!granted) b.close();  // ends the wait (the future then holds closed)
  ASSERT_TRUE(granted) << "the grant did not reach the async waiter";
  Lease lease = pending.get();
  EXPECT_TRUE(lease.valid());
  lease.release();
}

// force_unlock frees the lock and grants it to the head waiter at once. The
// holder's lease, the waiter's liveness and its wait are 10 min, the bound
// 20 s: only the grant's message lets the waiter in.
TEST(FairLock, ForceUnlockGrantsTheLockToTheHeadWaiter) {
  RedisServer server;
  Client a(options_for(server, 10min));
  Client b(options_for(server, 10min));
  Client admin(options_for(server));
  Lock held = a.fair_lock("fair-forced");
  held.lock();
  Lock waiter = b.fair_lock("fair-forced");
  const long long before = test::evalsha_calls(a);
  auto got = std::async(std::launch::async, [&] {
    const bool in = waiter.try_lock_for(10min);
    const bool mine = in && waiter.is_held_by_current_thread();
    if (in) waiter.unlock();
    return mine;
  });
  await_queued(a, "fair-forced", 1);
  await_settled(a, before);
  EXPECT_TRUE(admin.fair_lock("fair-forced").force_unlock()) << "it was held";
  const bool granted = got.wait_for(20s) == std::future_status::ready;
  if (!granted) b.close();  // ends the wait (it then throws closed)
  ASSERT_TRUE(granted) << "force_unlock did not grant the lock to the waiter";
  EXPECT_TRUE(got.get());
}

// Inside each hold, a non-atomic read-modify-write of a plain counter with a
// pause between the read and the write: two holders inside at once lose an
// increment.
TEST(FairLock, ManyThreadsForManyRoundsNeverOverlap) {
  RedisServer server;
  const std::string name = "fair-stress";
  std::vector<std::unique_ptr<Client>> clients;
  for (int c = 0; c < 2; ++c) clients.push_back(std::make_unique<Client>(options_for(server)));
  std::mutex m;
  std::vector<test::HoldRecord> records;
  std::vector<std::thread> threads;
  std::atomic<int> counter{0};  // read and written as a plain value
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Lock lock = clients[static_cast<std::size_t>(t % 2)]->fenced_fair_lock(name);
      for (int r = 0; r < 40; ++r) {
        ASSERT_TRUE(lock.try_lock_for(60s));
        test::HoldRecord rec;
        rec.name = name;
        rec.process = t % 2;
        rec.thread = t;
        rec.enter_ns = test::steady_now_ns();
        rec.fencing_token = lock.fencing_token();
        rec.lease_deadline_ns = test::steady_ns(lock.lease_deadline().value());
        const int seen = counter.load(std::memory_order_relaxed);
        std::this_thread::sleep_for(100us);
        counter.store(seen + 1, std::memory_order_relaxed);
        rec.exit_ns = test::steady_now_ns();
        lock.unlock();
        std::lock_guard g(m);
        records.push_back(rec);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(records.size(), 8u * 40u);
  EXPECT_EQ(counter.load(), 8 * 40) << "increments were lost: two threads were inside at once";
  const auto result = test::check_mutual_exclusion(records);
  EXPECT_TRUE(result.ok()) << result.report();
}

}  // namespace
}  // namespace distlock
