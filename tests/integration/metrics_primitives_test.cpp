// Client metrics per primitive against a real redis-server: for the fair,
// read, write and simple locks, the latch and the rate limiter, a small
// workload whose every acquire has a known outcome, then the exact counts
// docs/monitoring.md promises for that primitive (and zero under every other
// label), the held gauge, the watchdog's renewals and the in-flight gauge.
#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <string>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

// What one primitive's series should show.
struct Counts {
  std::uint64_t acquired = 0;
  std::uint64_t not_acquired = 0;
  std::uint64_t failed = 0;
  std::uint64_t contended = 0;
  std::uint64_t holds = 0;  // hold histogram observations
};

// Every primitive's acquires, contention, waits and holds: `want` for `p`,
// zero for all others (a count under the wrong label shows on both sides).
void expect_only(const MetricsSnapshot& s, MetricPrimitive p, const Counts& want) {
  for (std::size_t i = 0; i < kMetricPrimitives; ++i) {
    const auto q = static_cast<MetricPrimitive>(i);
    const Counts w = q == p ? want : Counts{};
    const PrimitiveMetrics& m = s.of(q);
    EXPECT_EQ(m.acquires_of(AcquireResult::acquired), w.acquired) << to_string(q);
    EXPECT_EQ(m.acquires_of(AcquireResult::not_acquired), w.not_acquired) << to_string(q);
    EXPECT_EQ(m.acquires_of(AcquireResult::failed), w.failed) << to_string(q);
    EXPECT_EQ(m.acquires_of(AcquireResult::cancelled), 0u) << to_string(q);
    EXPECT_EQ(m.contended, w.contended) << to_string(q);
    EXPECT_EQ(m.wait.count, w.acquired + w.not_acquired + w.failed)
        << to_string(q) << ": every acquire, any outcome";
    EXPECT_EQ(m.hold.count, w.holds) << to_string(q);
  }
}

// What is left when the workload is over: nothing held, nothing lost, no
// failed renewal, and no command in flight once the last replies are read.
void expect_at_rest(const Client& client) {
  const MetricsSnapshot s = client.metrics();
  EXPECT_EQ(s.held_now, 0);
  EXPECT_EQ(s.leases_lost, (std::array<std::uint64_t, 3>{0, 0, 0}));
  EXPECT_EQ(s.renewals_failed, 0u);
  EXPECT_EQ(s.reconnects, 0u);
  EXPECT_TRUE(eventually([&] { return client.metrics().commands_in_flight == 0; }, 10s))
      << "in flight: " << client.metrics().commands_in_flight;
}

// A client of the server has subscribed to a channel whose name contains
// `name`: a waiter's first attempt found the primitive taken.
bool subscribed(Client& admin, const std::string& name) {
  return !admin.command("PUBSUB", "CHANNELS", "*" + name + "*").as_array().empty();
}

// A watchdog lease of 3 s, renewed every second: a hold sees a renewal soon.
constexpr auto kShortWatchdog = 3s;

// The hold has been renewed at least once, and no renewal failed.
void expect_renewed(const Client& client) {
  ASSERT_TRUE(eventually([&] { return client.metrics().renewals_ok >= 1; }, 20s))
      << "no renewal counted while a watchdog lease was held";
  EXPECT_EQ(client.metrics().renewals_failed, 0u);
}

using LockOf = std::function<Lock(Client&, const std::string&)>;

// The workload of a reentrant lock kind `p` on `name`, taken through `mine`,
// while another Client takes it through `theirs` (a kind that excludes it):
// lock, a renewal, a re-entry, two unlocks (2 acquired, 1 hold); a try_lock
// while the other holds (not acquired, not contended); a wait that the
// other's unlock ends (acquired, contended, 1 hold); a try_lock of a key of
// another type (failed).
void reentrant_workload(MetricPrimitive p,
                        const std::string& name,
                        const LockOf& mine,
                        const LockOf& theirs) {
  RedisServer server;
  Client client(options_for(server, kShortWatchdog));
  Client other(options_for(server));
  Client admin(options_for(server));
  Lock lock = mine(client, name);

  lock.lock();
  EXPECT_EQ(client.metrics().held_now, 1);
  expect_renewed(client);
  lock.lock();
  EXPECT_EQ(client.metrics().held_now, 1) << "a re-entry is the same holding";
  lock.unlock();
  EXPECT_EQ(client.metrics().held_now, 1) << "held once more";
  EXPECT_EQ(client.metrics().of(p).hold.count, 0u) << "still held";
  lock.unlock();
  EXPECT_EQ(client.metrics().held_now, 0);
  EXPECT_EQ(client.metrics().of(p).hold.count, 1u) << "one holding, however often re-entered";

  Lock blocker = theirs(other, name);
  blocker.lock();
  EXPECT_FALSE(lock.try_lock()) << "held by the other Client";
  auto waiter = std::async(std::launch::async, [lock]() mutable {
    const bool got = lock.try_lock_for(30s);
    if (got) lock.unlock();
    return got;
  });
  ASSERT_TRUE(eventually([&] { return subscribed(admin, name); }, 10s))
      << "the waiter never found it held";
  blocker.unlock();
  ASSERT_EQ(waiter.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(waiter.get());

  const std::string bad = name + ":wrongtype";
  admin.command("SET", bad, "a string, not a hash");
  std::error_code ec;
  EXPECT_FALSE(mine(client, bad).try_lock(ec));
  EXPECT_TRUE(ec) << "a WRONGTYPE reply is an error";

  expect_only(client.metrics(), p,
              {.acquired = 3, .not_acquired = 1, .failed = 1, .contended = 1, .holds = 2});
  expect_at_rest(client);
}

TEST(Metrics, AFairLockCountsItsAcquiresByOutcomeAReentryAsOneHoldAndItsRenewals) {
  reentrant_workload(
      MetricPrimitive::fair_lock, "metrics:fair",
      [](Client& c, const std::string& n) { return c.fair_lock(n); },
      [](Client& c, const std::string& n) { return c.fair_lock(n); });
}

TEST(Metrics, AReadLockCountsItsAcquiresByOutcomeAReentryAsOneHoldAndItsRenewals) {
  reentrant_workload(
      MetricPrimitive::read_lock, "metrics:rw",
      [](Client& c, const std::string& n) { return c.read_write_lock(n).read_lock(); },
      [](Client& c, const std::string& n) { return c.read_write_lock(n).write_lock(); });
}

TEST(Metrics, AWriteLockCountsItsAcquiresByOutcomeAReentryAsOneHoldAndItsRenewals) {
  reentrant_workload(
      MetricPrimitive::write_lock, "metrics:rw",
      [](Client& c, const std::string& n) { return c.read_write_lock(n).write_lock(); },
      [](Client& c, const std::string& n) { return c.read_write_lock(n).read_lock(); });
}

// Not reentrant: a thread lock and a Lease are one holding each, and the
// holder's own try_lock is refused before anything is sent, so it is not an
// acquire. A key of another type is contention for a SET NX, so the failed
// acquire is a write refused by a server over its maxmemory.
TEST(Metrics, ASimpleLockCountsItsAcquiresByOutcomeEachHoldingAndItsRenewals) {
  RedisServer server;
  Client client(options_for(server, kShortWatchdog));
  Client other(options_for(server));
  Client admin(options_for(server));
  SimpleLock lock = client.simple_lock("metrics:simple");

  lock.lock();
  EXPECT_EQ(client.metrics().held_now, 1);
  expect_renewed(client);
  EXPECT_FALSE(lock.try_lock()) << "its holder's try (not counted)";
  lock.unlock();
  EXPECT_EQ(client.metrics().held_now, 0);
  Lease lease = lock.acquire();
  EXPECT_EQ(client.metrics().held_now, 1);
  lease.release();
  EXPECT_EQ(client.metrics().held_now, 0);
  EXPECT_EQ(client.metrics().of(MetricPrimitive::simple_lock).hold.count, 2u);

  SimpleLock blocker = other.simple_lock("metrics:simple");
  blocker.lock();
  EXPECT_FALSE(lock.try_lock()) << "held by the other Client";
  auto waiter = std::async(std::launch::async, [lock]() mutable {
    const bool got = lock.try_lock_for(30s);
    if (got) lock.unlock();
    return got;
  });
  ASSERT_TRUE(eventually([&] { return subscribed(admin, "metrics:simple"); }, 10s))
      << "the waiter never found it held";
  blocker.unlock();
  ASSERT_EQ(waiter.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(waiter.get());

  admin.command("CONFIG", "SET", "maxmemory", "1");
  std::error_code ec;
  EXPECT_FALSE(lock.try_lock(ec));
  EXPECT_TRUE(ec) << "an OOM reply is an error";
  admin.command("CONFIG", "SET", "maxmemory", "0");

  expect_only(client.metrics(), MetricPrimitive::simple_lock,
              {.acquired = 3, .not_acquired = 1, .failed = 1, .contended = 1, .holds = 3});
  expect_at_rest(client);
}

// A latch has no holding. A wait that ends at its deadline waited, so it is
// contended as well as not acquired; a wait of 0 is a single try.
TEST(Metrics, ALatchCountsItsWaitsByOutcomeAndHoldsNothing) {
  RedisServer server;
  Client client(options_for(server));
  Client admin(options_for(server));
  Latch latch = client.latch("metrics:latch");
  ASSERT_TRUE(latch.try_set_count(1));

  EXPECT_FALSE(latch.wait_for(0ms)) << "a single try of a closed latch";
  EXPECT_FALSE(latch.wait_for(1s)) << "nobody counts it down";

  Latch opened_later = client.latch("metrics:latch-later");
  ASSERT_TRUE(opened_later.try_set_count(1));
  auto waiter = std::async(std::launch::async,
                           [opened_later]() mutable { return opened_later.wait_for(30s); });
  ASSERT_TRUE(eventually([&] { return subscribed(admin, "metrics:latch-later"); }, 10s))
      << "the waiter never found it closed";
  opened_later.count_down();
  ASSERT_EQ(waiter.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(waiter.get());

  latch.count_down();
  latch.wait();
  EXPECT_EQ(client.metrics().held_now, 0) << "an open latch is not a holding";

  admin.command("HSET", "metrics:latch-bad", "field", "a hash, not a count");
  std::error_code ec;
  client.latch("metrics:latch-bad").wait(ec);
  EXPECT_TRUE(ec) << "a WRONGTYPE reply is an error";

  expect_only(client.metrics(), MetricPrimitive::latch,
              {.acquired = 2, .not_acquired = 2, .failed = 1, .contended = 2, .holds = 0});
  expect_at_rest(client);
}

// One permit per 3 s: the try right after an acquire is refused at once (its
// wait is beyond its deadline, so not contended), a bounded wait sleeps the
// server's wait (contended), and asking for more than the rate, or of a
// limiter without a rate, is an error; asking for 0 is refused unsent.
TEST(Metrics, ARateLimiterCountsItsAcquiresByOutcomeAndHoldsNothing) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("metrics:rate");
  ASSERT_TRUE(limiter.try_set_rate(1, 3000ms));

  EXPECT_TRUE(limiter.try_acquire());
  EXPECT_FALSE(limiter.try_acquire()) << "the window's permit is taken";
  EXPECT_TRUE(limiter.try_acquire_for(1, 30s)) << "the next window's permit";
  EXPECT_EQ(client.metrics().held_now, 0) << "a permit of a rate limiter is not a holding";

  std::error_code ec;
  EXPECT_FALSE(limiter.try_acquire(2, ec));
  EXPECT_EQ(ec, errc::invalid_argument) << "2 permits of a rate of 1";
  EXPECT_FALSE(client.rate_limiter("metrics:rate-unset").try_acquire(1, ec));
  EXPECT_EQ(ec, errc::invalid_argument) << "no rate set";
  EXPECT_FALSE(limiter.try_acquire(0, ec));
  EXPECT_EQ(ec, errc::invalid_argument) << "refused before anything is sent: not an acquire";

  expect_only(client.metrics(), MetricPrimitive::rate_limiter,
              {.acquired = 2, .not_acquired = 1, .failed = 2, .contended = 1, .holds = 0});
  expect_at_rest(client);
}

}  // namespace
}  // namespace distlock
