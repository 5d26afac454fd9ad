// The crash-safe Semaphore and its expiring Permits (issue 12, items 1 and 2)
// against real redis-server processes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "distlock/distlock.hpp"
#include "integration/settled_waiters.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

// Waiters' leases (and so their fallback retry, a third of the lease) and
// holders' leases far beyond every bound below: a waiter seen woken within
// its bound was woken by a message (or by the retry at a dead holder's lease
// end, where that is what the test proves).
constexpr auto kLongLease = std::chrono::minutes(10);

std::string channel(const std::string& name) {
  return "redisson_sc:{" + name + "}";
}

// True once one waiter that started after `before` script calls is
// subscribed and has made its attempt after subscribing: from then on only
// a message (or its fallback retry, a third of a long lease later) can wake
// it.
bool waiter_settled(Client& c, const std::string& name, long long before) {
  return test::waiters_settled(c, channel(name), 1, before, 2);
}

TEST(Semaphore, TrySetPermitsSucceedsOnlyOnceAcrossClients) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  EXPECT_TRUE(a.semaphore("once").try_set_permits(3));
  EXPECT_FALSE(b.semaphore("once").try_set_permits(5));
  EXPECT_FALSE(a.semaphore("once").try_set_permits(7));
  EXPECT_EQ(b.semaphore("once").available_permits(), 3);
}

TEST(Semaphore, AcquireAndReleaseArithmeticIsSeenByEveryClient) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  Semaphore sa = a.semaphore("arith"), sb = b.semaphore("arith");
  ASSERT_TRUE(sa.try_set_permits(5));
  sa.acquire(2);
  EXPECT_EQ(sb.available_permits(), 3);
  EXPECT_TRUE(sb.try_acquire(3));
  EXPECT_EQ(sa.available_permits(), 0);
  sa.release(1);
  EXPECT_EQ(sb.available_permits(), 1);
  sb.release(3);
  EXPECT_EQ(sa.available_permits(), 4);
  EXPECT_EQ(sa.held_permits(), 1);
  EXPECT_EQ(sb.held_permits(), 0);
}

TEST(Semaphore, AnyThreadOfTheClientMayReleaseWhatAnotherAcquired) {
  RedisServer server;
  Client c(options_for(server));
  Semaphore s = c.semaphore("threads");
  ASSERT_TRUE(s.try_set_permits(2));
  std::async(std::launch::async, [&] { s.acquire(2); }).get();
  // Another Semaphore object of the same Client and name sees the holding.
  Semaphore again = c.semaphore("threads");
  std::async(std::launch::async, [&] { again.release(2); }).get();
  EXPECT_EQ(s.available_permits(), 2);
}

TEST(Semaphore, AFailedTryAcquireTakesNothing) {
  RedisServer server;
  Client c(options_for(server));
  Semaphore s = c.semaphore("fail");
  ASSERT_TRUE(s.try_set_permits(2));
  EXPECT_FALSE(s.try_acquire(3));
  EXPECT_FALSE(s.try_acquire_for(3, 100ms));
  EXPECT_EQ(s.available_permits(), 2);
  EXPECT_EQ(s.held_permits(), 0);
  EXPECT_EQ(
      c.command("EXISTS", "distlock_sem_holders:{fail}", "distlock_sem_counts:{fail}").as_integer(),
      0);
}

TEST(Semaphore, ReleasingMoreThanTheClientHoldsIsNotOwnerAndChangesNothing) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  Semaphore sa = a.semaphore("owner"), sb = b.semaphore("owner");
  ASSERT_TRUE(sa.try_set_permits(3));
  sa.acquire(2);
  try {
    sb.release(1);
    ADD_FAILURE() << "b holds none";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::not_owner);
  }
  std::error_code ec;
  sa.release(3, ec);
  EXPECT_EQ(ec, errc::not_owner);
  EXPECT_EQ(sa.available_permits(), 1);
  EXPECT_EQ(sa.held_permits(), 2);
}

TEST(Semaphore, AWaiterForNIsNotSatisfiedByFewer) {
  RedisServer server;
  Client a(options_for(server, kLongLease)), b(options_for(server, kLongLease));
  Semaphore sa = a.semaphore("all-or-nothing"), sb = b.semaphore("all-or-nothing");
  ASSERT_TRUE(sa.try_set_permits(0));
  const auto before = test::evalsha_calls(a);
  // The wait outlasts every bound below, as does its fallback retry.
  auto waiter = std::async(std::launch::async, [&] { return sb.try_acquire_for(3, 60s); });
  ASSERT_TRUE(waiter_settled(a, "all-or-nothing", before));
  const auto settled = test::evalsha_calls(a);
  sa.add_permits(2);
  // The add's script, then the attempt its message woke: 2 < 3 took nothing.
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(a) - settled >= 2; }, 20s))
      << "the waiter made no attempt after the add";
  EXPECT_EQ(sa.available_permits(), 2) << "a waiter for 3 took the 2";
  EXPECT_EQ(sb.held_permits(), 0);
  EXPECT_EQ(waiter.wait_for(0ms), std::future_status::timeout);
  sa.add_permits(1);
  ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready) << "the third permit woke nobody";
  EXPECT_TRUE(waiter.get());
  EXPECT_EQ(sa.available_permits(), 0);
}

TEST(Semaphore, AWaiterWakesOnAnotherClientsRelease) {
  RedisServer server;
  // A long watchdog: the waiter's fallback retry (a third of it) cannot be
  // what wakes it within the bound.
  Client a(options_for(server, 120s)), b(options_for(server, 120s));
  Semaphore sa = a.semaphore("wake"), sb = b.semaphore("wake");
  ASSERT_TRUE(sa.try_set_permits(1));
  sa.acquire();
  const auto before = test::evalsha_calls(a);
  // The wait outlasts the bound below: a waiter that is not woken is still
  // waiting then (its last attempt at its own deadline would succeed).
  auto waiter = std::async(std::launch::async, [&] { return sb.try_acquire_for(1, 35s); });
  ASSERT_TRUE(waiter_settled(a, "wake", before));
  sa.release();
  ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready) << "the release woke nobody";
  EXPECT_TRUE(waiter.get());
  EXPECT_EQ(sb.held_permits(), 1);
}

TEST(Semaphore, AWaiterWakesOnAddPermits) {
  RedisServer server;
  Client a(options_for(server, 120s)), b(options_for(server, 120s));
  Semaphore sa = a.semaphore("add-wake"), sb = b.semaphore("add-wake");
  ASSERT_TRUE(sa.try_set_permits(0));
  const auto before = test::evalsha_calls(a);
  auto waiter = std::async(std::launch::async, [&] { return sb.try_acquire_for(2, 35s); });
  ASSERT_TRUE(waiter_settled(a, "add-wake", before));
  sa.add_permits(2);
  ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready) << "add_permits woke nobody";
  EXPECT_TRUE(waiter.get());
}

TEST(Semaphore, AddPermitsMayTakeTheTotalBelowZero) {
  RedisServer server;
  Client c(options_for(server));
  Semaphore s = c.semaphore("negative");
  ASSERT_TRUE(s.try_set_permits(1));
  s.add_permits(-3);
  EXPECT_EQ(s.available_permits(), -2);
  EXPECT_FALSE(s.try_acquire(1));
  EXPECT_EQ(s.drain_permits(), 0);
  EXPECT_EQ(s.available_permits(), -2);
  s.add_permits(3);
  EXPECT_TRUE(s.try_acquire(1));
}

TEST(Semaphore, DrainTakesTheAvailablePermitsAndHeldOnesComeBackOnRelease) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  Semaphore sa = a.semaphore("drain"), sb = b.semaphore("drain");
  ASSERT_TRUE(sa.try_set_permits(5));
  sa.acquire(2);
  EXPECT_EQ(sb.drain_permits(), 3);
  EXPECT_EQ(sb.available_permits(), 0);
  EXPECT_EQ(sa.held_permits(), 2);
  sa.release(2);
  EXPECT_EQ(sb.available_permits(), 2);
}

TEST(Semaphore, ACountOfZeroOrLessIsRejectedWithNothingChanged) {
  RedisServer server;
  Client c(options_for(server));
  Semaphore s = c.semaphore("bad");
  ASSERT_TRUE(s.try_set_permits(2));
  s.acquire(1);
  for (const std::int64_t n : {0L, -1L}) {
    EXPECT_THROW(s.acquire(n), Error);
    EXPECT_THROW(s.try_acquire(n), Error);
    EXPECT_THROW(s.try_acquire_for(n, 10ms), Error);
    EXPECT_THROW(s.release(n), Error);
    EXPECT_THROW(s.acquire_permit(n), Error);
    std::error_code ec;
    s.release(n, ec);
    EXPECT_EQ(ec, errc::invalid_argument);
  }
  EXPECT_THROW(s.try_set_permits(-1), Error);
  EXPECT_THROW(s.add_permits(0), Error);
  EXPECT_EQ(s.available_permits(), 1);
  EXPECT_EQ(s.held_permits(), 1);
}

TEST(Semaphore, AProcessKeepsItsPermitsWhileAliveAndGivesThemBackAfterSigkill) {
  RedisServer server;
  // The waiter's fallback retry (a third of its lease) lies far beyond the
  // bound below: only its retry at the dead holder's lease end (1 s after
  // the last renewal) can take the permits within it.
  Client c(options_for(server, kLongLease));
  Semaphore s = c.semaphore("crash");
  ASSERT_TRUE(s.try_set_permits(3));
  auto holder = test::ChildProcess::spawn(
      {DISTLOCK_LOCK_WORKER, "semaphore-hold", server.uri(), "crash", "1000", "2"});
  ASSERT_TRUE(eventually([&] { return s.available_permits() == 1; }, 20s));
  // Alive: its watchdog renews the 1 s lease; three leases later it still holds.
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(s.available_permits(), 1) << "a live holder keeps its permits";
  EXPECT_FALSE(s.try_acquire(2));
  holder.kill_and_reap();
  // The wait outlasts the bound: a waiter that missed the lease end would
  // still be waiting then (its last attempt, at its deadline, would succeed).
  auto waiter = std::async(std::launch::async, [&] { return s.try_acquire_for(2, 60s); });
  ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready) << "the dead holder's lease ends";
  EXPECT_TRUE(waiter.get());
  EXPECT_EQ(s.held_permits(), 2);
}

TEST(Semaphore, AClientKeepsItsPermitsAcrossManyLeases) {
  RedisServer server;
  Client holder(options_for(server, 300ms)), other(options_for(server));
  Semaphore sh = holder.semaphore("renewed"), so = other.semaphore("renewed");
  ASSERT_TRUE(sh.try_set_permits(1));
  sh.acquire();
  std::this_thread::sleep_for(1500ms);  // five leases
  EXPECT_FALSE(so.try_acquire());
  EXPECT_NO_THROW(sh.release());
}

// --- expiring permits ---------------------------------------------------------------

TEST(Permit, AFixedLeasePermitLapsesAndItsPermitsReturn) {
  RedisServer server;
  Client c(options_for(server));
  Semaphore s = c.semaphore("lapse");
  ASSERT_TRUE(s.try_set_permits(2));
  Permit p = s.acquire_permit(2, 300ms);
  EXPECT_EQ(p.permits(), 2);
  EXPECT_EQ(s.available_permits(), 0);
  EXPECT_TRUE(s.try_acquire_for(2, 20s)) << "the fixed lease runs out";
  EXPECT_FALSE(p.valid());
}

TEST(Permit, ItsStopTokenFiresWhenTheLeaseRunsOut) {
  RedisServer server;
  Client c(options_for(server));
  Semaphore s = c.semaphore("stop");
  ASSERT_TRUE(s.try_set_permits(1));
  Permit p = s.acquire_permit(1, 200ms);
  std::promise<void> fired;
  std::stop_callback cb(p.stop_token(), [&] { fired.set_value(); });
  EXPECT_EQ(fired.get_future().wait_for(20s), std::future_status::ready);
}

TEST(Permit, ReleaseAfterExpiryReportsLeaseLostAndASecondReleaseIsHarmless) {
  RedisServer server;
  Client c(options_for(server));
  Semaphore s = c.semaphore("late");
  ASSERT_TRUE(s.try_set_permits(1));
  Permit p = s.acquire_permit(1, 200ms);
  std::promise<void> fired;
  std::stop_callback cb(p.stop_token(), [&] { fired.set_value(); });
  ASSERT_EQ(fired.get_future().wait_for(20s), std::future_status::ready);
  ASSERT_TRUE(eventually([&] { return s.available_permits() == 1; }, 20s));
  std::error_code ec;
  p.release(ec);
  EXPECT_EQ(ec, errc::lease_lost);
  p.release(ec);
  EXPECT_FALSE(ec);
  EXPECT_EQ(s.available_permits(), 1) << "nothing given back twice";
}

TEST(Permit, ReleaseGivesThePermitsBackOnceEvenWhenCalledTwice) {
  RedisServer server;
  Client c(options_for(server));
  Semaphore s = c.semaphore("twice");
  ASSERT_TRUE(s.try_set_permits(3));
  Permit p = s.acquire_permit(2);
  EXPECT_TRUE(p.valid());
  std::error_code ec;
  p.release(ec);
  EXPECT_FALSE(ec);
  p.release(ec);
  EXPECT_FALSE(ec);
  EXPECT_EQ(s.available_permits(), 3);
  {
    Permit q = s.acquire_permit(3);
    EXPECT_EQ(s.available_permits(), 0);
  }
  EXPECT_EQ(s.available_permits(), 3) << "released on destruction";
}

TEST(Permit, AWatchdogPermitOutlivesManyLeases) {
  RedisServer server;
  Client c(options_for(server, 300ms));
  Semaphore s = c.semaphore("watched");
  ASSERT_TRUE(s.try_set_permits(1));
  Permit p = s.acquire_permit(1);
  std::this_thread::sleep_for(1500ms);
  EXPECT_TRUE(p.valid());
  EXPECT_EQ(s.available_permits(), 0);
}

TEST(Permit, TryAcquirePermitGivesUpWithoutTakingAnything) {
  RedisServer server;
  Client c(options_for(server));
  Semaphore s = c.semaphore("give-up");
  ASSERT_TRUE(s.try_set_permits(1));
  EXPECT_FALSE(s.try_acquire_permit(2, 100ms).has_value());
  EXPECT_EQ(s.available_permits(), 1);
  auto p = s.try_acquire_permit(1, 100ms, 10s);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(s.available_permits(), 0);
}

}  // namespace
}  // namespace distlock
