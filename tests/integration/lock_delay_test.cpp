// Lock-delay (issue 27, docs/lock.md "Lock-delay"): a holding whose lease
// ended without a release keeps the lock from everyone for its delay, on the
// server's clock; a release, a partial unlock and force_unlock never do.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

enum class Kind { lock, fenced, simple, fenced_simple, fair, fenced_fair, write, fenced_write };

const char* worker_kind(Kind k) {
  switch (k) {
    case Kind::lock:
      return "lock";
    case Kind::fenced:
      return "fenced";
    case Kind::simple:
      return "simple";
    case Kind::fenced_simple:
      return "fenced-simple";
    case Kind::fair:
      return "fair";
    case Kind::fenced_fair:
      return "fenced-fair";
    case Kind::write:
      return "write";
    case Kind::fenced_write:
      return "fenced-write";
  }
  return "";
}

Lock make(Client& c, Kind k, const std::string& name, LockOptions o = {}) {
  switch (k) {
    case Kind::lock:
      return c.lock(name, o);
    case Kind::fenced:
      return c.fenced_lock(name, o);
    case Kind::simple:
      return c.simple_lock(name, o).as_lock();
    case Kind::fenced_simple:
      return c.fenced_simple_lock(name, o).as_lock();
    case Kind::fair:
      return c.fair_lock(name, o);
    case Kind::fenced_fair:
      return c.fenced_fair_lock(name, o);
    case Kind::write:
      return c.read_write_lock(name, o).write_lock();
    case Kind::fenced_write:
      return c.fenced_read_write_lock(name, o).write_lock();
  }
  throw std::logic_error("kind");
}

std::string marker(const std::string& name) {
  return "distlock_lock_delay:{" + name + "}";
}

// The lock's and the marker's PTTL and the server's TIME in ms, read at one
// instant of the server (one script).
struct Clocks {
  std::int64_t lock_pttl, marker_pttl, now_ms;
};
Clocks clocks(Client& c, const std::string& name) {
  const Value v = c.command(
      "EVAL",
      "local t = redis.call('time') return {redis.call('pttl', KEYS[1]), "
      "redis.call('pttl', KEYS[2]), tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}",
      "2", name, marker(name));
  const auto& a = v.as_array();
  return {a[0].as_integer(), a[1].as_integer(), a[2].as_integer()};
}

class LockDelay : public ::testing::TestWithParam<Kind> {};

// The dead holder's watchdog lease is 1 s and its delay 4 s. The successor
// (a handle with a delay too: only those read the marker) waits up to 10 min
// (its retry is the marker's PTTL, so it retries when the delay ends, not
// before); the test bounds that at 60 s.
TEST_P(LockDelay, ASigkilledHoldersLockIsRefusedUntilItsLeaseEndPlusTheDelay) {
  RedisServer server;
  Client client(options_for(server));
  const std::string name = "delayed";
  Lock successor = make(client, GetParam(), name, LockOptions{1ms});
  auto holder = test::ChildProcess::spawn({DISTLOCK_LOCK_WORKER, "delay-hold", server.uri(),
                                           worker_kind(GetParam()), name, "1000", "4000"});
  ASSERT_TRUE(eventually([&] { return successor.is_locked(); }, 20s));
  EXPECT_GT(clocks(client, name).marker_pttl, clocks(client, name).lock_pttl)
      << "the marker outlives the lease";
  holder.kill_and_reap();

  // The lease ends on its own (no release): the marker is left, ending
  // exactly the delay later on the server's clock.
  ASSERT_TRUE(eventually([&] { return clocks(client, name).lock_pttl == -2; }, 20s));
  const Clocks at_end = clocks(client, name);
  ASSERT_GT(at_end.marker_pttl, 0) << "the delay runs after the lease ended unreleased";
  const std::int64_t delay_end = at_end.now_ms + at_end.marker_pttl;

  // Half-way through the delay the lock is free on the server and still refused.
  ASSERT_TRUE(eventually([&] { return clocks(client, name).marker_pttl <= 2000; }, 20s));
  EXPECT_FALSE(successor.try_lock()) << "taken during the delay";
  EXPECT_GT(clocks(client, name).marker_pttl, 0) << "the refusal was not within the delay";
  EXPECT_FALSE(successor.is_locked()) << "during the delay the lock itself is not held";

  ASSERT_TRUE(successor.try_lock_for(10min));
  const Clocks got = clocks(client, name);
  EXPECT_GE(got.now_ms, delay_end) << "taken before the lease end + the delay";
  // The successor's own marker: its lease + its 1 ms delay (PTTLs round).
  EXPECT_GE(got.marker_pttl, got.lock_pttl);
  EXPECT_LE(got.marker_pttl, got.lock_pttl + 10);
  successor.unlock();
}

TEST_P(LockDelay, ACleanReleaseLeavesNoDelay) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  Lock first = make(a, GetParam(), "clean", LockOptions{10min});
  Lock second = make(b, GetParam(), "clean", LockOptions{10min});
  first.lock();
  EXPECT_GT(clocks(a, "clean").marker_pttl, 9min / 1ms) << "the holder's marker is set";
  first.unlock();
  EXPECT_EQ(clocks(a, "clean").marker_pttl, -2) << "the release deletes the marker";
  EXPECT_TRUE(second.try_lock()) << "a clean release must not arm the delay";
  second.unlock();
}

// A lease that runs out without a release is the same loss whether the
// holder's process died or not: the live holder's own fixed lease arms it.
TEST_P(LockDelay, ForceUnlockEndsARunningDelay) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  Lock first = make(a, GetParam(), "forced", LockOptions{10min});
  Lock second = make(b, GetParam(), "forced", LockOptions{1ms});
  first.lock(300ms);
  ASSERT_TRUE(eventually([&] { return clocks(b, "forced").lock_pttl == -2; }, 20s));
  EXPECT_FALSE(second.try_lock()) << "the delay after the fixed lease ran out";
  EXPECT_FALSE(second.force_unlock()) << "nothing held: force_unlock reports false";
  EXPECT_EQ(clocks(b, "forced").marker_pttl, -2) << "force_unlock ends the delay";
  EXPECT_TRUE(second.try_lock());
  second.unlock();
}

// Documented: the marker is opt-in on both sides; a handle without a delay
// neither sets nor reads it (so it costs nothing and a Cluster slot
// migration sees the one key it always saw).
TEST_P(LockDelay, AHandleWithoutADelayNeitherReadsNorWritesTheMarker) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  Lock first = make(a, GetParam(), "optin", LockOptions{10min});
  Lock plain = make(b, GetParam(), "optin");
  first.lock(300ms);
  ASSERT_TRUE(eventually([&] { return clocks(b, "optin").lock_pttl == -2; }, 20s));
  ASSERT_GT(clocks(b, "optin").marker_pttl, 0);
  EXPECT_TRUE(plain.try_lock()) << "a handle without a delay does not read the marker";
  plain.unlock();
  EXPECT_GT(clocks(b, "optin").marker_pttl, 0) << "nor does its release delete it";
}

// The watchdog keeps the marker exactly the delay longer than the lease:
// past the first lease + delay, the marker still stands while the lock is
// held, and the two PTTLs read at one instant differ by the delay.
TEST_P(LockDelay, TheWatchdogKeepsTheMarkerTheDelayLongerThanTheLease) {
  RedisServer server;
  Client a(options_for(server, 600ms));
  Lock lock = make(a, GetParam(), "renewed", LockOptions{1000ms});
  lock.lock();
  const std::int64_t first_end = clocks(a, "renewed").now_ms + 600 + 1000;
  ASSERT_TRUE(eventually([&] { return clocks(a, "renewed").now_ms > first_end + 300; }, 20s));
  const Clocks c = clocks(a, "renewed");
  ASSERT_GT(c.lock_pttl, 0) << "the watchdog keeps the lock";
  // (Two PTTLs in one script still round apart by a millisecond or two.)
  EXPECT_NEAR(c.marker_pttl - c.lock_pttl, 1000, 5) << "the marker was not renewed with the lease";
  EXPECT_TRUE(lock.lease_valid());
  lock.unlock();
  EXPECT_EQ(clocks(a, "renewed").marker_pttl, -2);
}

INSTANTIATE_TEST_SUITE_P(Kinds,
                         LockDelay,
                         ::testing::Values(Kind::lock,
                                           Kind::fenced,
                                           Kind::simple,
                                           Kind::fenced_simple,
                                           Kind::fair,
                                           Kind::fenced_fair,
                                           Kind::write,
                                           Kind::fenced_write),
                         [](const auto& p) {
                           switch (p.param) {
                             case Kind::lock:
                               return std::string("Lock");
                             case Kind::fenced:
                               return std::string("FencedLock");
                             case Kind::simple:
                               return std::string("SimpleLock");
                             case Kind::fenced_simple:
                               return std::string("FencedSimpleLock");
                             case Kind::fair:
                               return std::string("FairLock");
                             case Kind::fenced_fair:
                               return std::string("FencedFairLock");
                             case Kind::write:
                               return std::string("WriteLock");
                             case Kind::fenced_write:
                               return std::string("FencedWriteLock");
                           }
                           return std::string();
                         });

TEST(LockDelayReentrant, APartialUnlockKeepsTheMarkerAndTheLastUnlockEndsIt) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  Lock lock = a.lock("partial", LockOptions{10min});
  Lock other = b.lock("partial", LockOptions{10min});
  lock.lock();
  lock.lock();
  // Time passes on the server's clock, so a marker left as the re-entry set
  // it would now end less than the delay after the re-armed lease.
  const std::int64_t entered = clocks(a, "partial").now_ms;
  ASSERT_TRUE(eventually([&] { return clocks(a, "partial").now_ms > entered + 50; }, 20s));
  lock.unlock();
  const Clocks c = clocks(a, "partial");
  ASSERT_GT(c.lock_pttl, 0) << "one hold is left";
  EXPECT_NEAR(c.marker_pttl - c.lock_pttl, 10min / 1ms, 5) << "the partial unlock re-arms both";
  EXPECT_FALSE(other.try_lock());
  lock.unlock();
  EXPECT_EQ(clocks(a, "partial").marker_pttl, -2);
  EXPECT_TRUE(other.try_lock()) << "the last unlock is a clean release";
  other.unlock();
}

TEST(LockDelayReadWrite, ADeadWritersDelayKeepsOutReadersWithADelayUntilForceUnlock) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  ReadWriteLock writer = a.read_write_lock("rwd", LockOptions{10min});
  ReadWriteLock reader = b.read_write_lock("rwd", LockOptions{1ms});
  ReadWriteLock plain = b.read_write_lock("rwd");
  writer.write_lock().lock(300ms);
  ASSERT_TRUE(eventually([&] { return clocks(b, "rwd").lock_pttl == -2; }, 20s));
  EXPECT_FALSE(reader.read_lock().try_lock()) << "read during a dead writer's delay";
  EXPECT_TRUE(plain.read_lock().try_lock()) << "a handle without a delay reads (documented)";
  plain.read_lock().unlock();
  EXPECT_FALSE(reader.read_lock().force_unlock());
  EXPECT_EQ(clocks(b, "rwd").marker_pttl, -2) << "force_unlock ends the delay";
  EXPECT_TRUE(reader.read_lock().try_lock());
  reader.read_lock().unlock();
}

// A fair lock hands a released lock to its first waiter by a grant; a
// waiter with a delay confirms the grant with an attempt of its own, which
// sets its marker (a grant taken from the message alone would hold the lock
// with no marker behind it).
TEST(LockDelayFair, AWaiterGrantedTheLockHoldsItWithItsOwnMarker) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  Lock first = a.fair_lock("granted", LockOptions{10min});
  Lock second = b.fair_lock("granted", LockOptions{5min});
  first.lock();
  auto waiter = std::async(std::launch::async, [&] {
    second.lock();
    const Clocks c = clocks(b, "granted");
    second.unlock();
    return c;
  });
  ASSERT_TRUE(eventually(
      [&] { return b.command("LLEN", "redisson_lock_queue:{granted}").as_integer() == 1; }, 20s));
  first.unlock();
  ASSERT_EQ(waiter.wait_for(60s), std::future_status::ready);
  const Clocks c = waiter.get();
  ASSERT_GT(c.lock_pttl, 0);
  EXPECT_NEAR(c.marker_pttl - c.lock_pttl, 5min / 1ms, 5) << "the grantee's marker is missing";
}

TEST(LockDelayReentrant, FencingTokensStillIncreaseWithADelay) {
  RedisServer server;
  Client a(options_for(server));
  Lock lock = a.fenced_lock("tokens", LockOptions{5s});
  lock.lock();
  const auto t1 = lock.fencing_token();
  lock.unlock();
  lock.lock();
  const auto t2 = lock.fencing_token();
  lock.unlock();
  ASSERT_TRUE(t1 && t2);
  EXPECT_GT(*t2, *t1);
}

TEST(LockDelayBadInput, ANegativeOrADayLongDelayIsRejectedAtTheFactoryWithoutIo) {
  RedisServer server;
  Client c(options_for(server));
  for (const std::chrono::milliseconds bad :
       {std::chrono::milliseconds(-1), std::chrono::milliseconds(24h),
        std::chrono::milliseconds(48h)}) {
    const LockOptions o{bad};
    for (auto f :
         {+[](Client&cl, const LockOptions&lo) { (void)cl.lock("x", lo); },
          +[](Client&cl, const LockOptions&lo) { (void)cl.fenced_lock("x", lo); },
          +[](Client&cl, const LockOptions&lo) { (void)cl.simple_lock("x", lo); },
          +[](Client&cl, const LockOptions&lo) { (void)cl.fenced_simple_lock("x", lo); },
          +[](Client&cl, const LockOptions&lo) { (void)cl.fair_lock("x", lo); },
          +[](Client&cl, const LockOptions&lo) { (void)cl.fenced_fair_lock("x", lo); },
          +[](Client&cl, const LockOptions&lo) { (void)cl.read_write_lock("x", lo); },
          +[](Client&cl, const LockOptions&lo) { (void)cl.fenced_read_write_lock("x", lo); }}) {
      try {
        f(c, o);
        ADD_FAILURE() << "lock_delay " << bad.count() << " ms accepted";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("lock_delay"), std::string::npos) << e.what();
      }
    }
  }
  // The edges that are fine.
  EXPECT_NO_THROW((void)c.lock("x", LockOptions{0ms}));
  EXPECT_NO_THROW((void)c.simple_lock("x", LockOptions{std::chrono::milliseconds(24h) - 1ms}));
  EXPECT_EQ(c.command("DBSIZE").as_integer(), 0) << "the factories made no I/O";
}

}  // namespace
}  // namespace distlock
