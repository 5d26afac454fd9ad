// The semaphore's server layout (docs/semaphore.md, Layout): a dead holder's
// permits come back at its lease end on the server's clock and not before,
// holders of the earlier layout are reclaimed alike, and a Permit of one
// writes nothing but its lease.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::options_for;
using test::RedisServer;

// Longer than every bound below: a waiter's fallback retry (a third of its
// lease) cannot be what serves it within them.
constexpr auto kLongLease = std::chrono::minutes(10);

std::string holders_key(const std::string& name) {
  return "distlock_sem_holders:{" + name + "}";
}

// The server's clock in ms, as the scripts read it (TIME).
std::int64_t server_ms(Client& c) {
  const Value t = c.command("TIME");
  const auto& a = t.as_array();
  return std::stoll(a[0].as_string()) * 1000 + std::stoll(a[1].as_string()) / 1000;
}

// The one holder's lease deadline (server ms).
std::int64_t only_deadline(Client& admin, const std::string& name) {
  const Value v = admin.command("ZRANGE", holders_key(name), "0", "-1", "WITHSCORES");
  const auto& a = v.as_array();
  EXPECT_EQ(a.size(), 2u) << "one holder";
  return a.size() == 2 ? std::stoll(a[1].as_string()) : 0;
}

// A Client that takes n of `name`'s permits and dies without releasing:
// closed, its watchdog stops and nothing gives them back but their lease.
void hold_and_die(const RedisServer& server,
                  const std::string& name,
                  std::int64_t n,
                  std::chrono::milliseconds lease) {
  Client dying(options_for(server, lease));
  dying.semaphore(name).acquire(n);
  dying.close();
}

TEST(SemaphoreLayout, ADeadHoldersPermitsComeBackAtItsLeaseEndOnTheServersClockAndNotBefore) {
  RedisServer server;
  Client probe(options_for(server, kLongLease)), admin(options_for(server, kLongLease));
  Semaphore s = probe.semaphore("dead");
  ASSERT_TRUE(s.try_set_permits(3));
  hold_and_die(server, "dead", 2, 3s);
  const std::int64_t deadline = only_deadline(admin, "dead");
  // Probe until they come back: every refusal saw the server's clock before
  // the deadline, the success at or after it. (Paced, not synchronised: a
  // probe's outcome is checked against TIME read around it.)
  int refused_before = 0;
  bool taken = false;
  const auto bound = std::chrono::steady_clock::now() + 30s;
  while (!taken && std::chrono::steady_clock::now() < bound) {
    const std::int64_t before = server_ms(admin);
    taken = s.try_acquire(2);
    const std::int64_t after = server_ms(admin);
    if (taken) {
      ASSERT_GE(after, deadline) << "given back before the holder's lease ended";
    } else {
      ASSERT_LT(before, deadline) << "still held after the lease ended on the server";
      ++refused_before;
      std::this_thread::sleep_for(50ms);
    }
  }
  ASSERT_TRUE(taken) << "the dead holder's permits never came back";
  EXPECT_GT(refused_before, 0) << "no probe ran before the deadline: the test proves little";
  EXPECT_EQ(s.held_permits(), 2);
  EXPECT_EQ(s.available_permits(), 1);
}

TEST(SemaphoreLayout, AWaiterGetsADeadHoldersPermitsAtItsLeaseEndWithoutAMessage) {
  RedisServer server;
  Client waiter(options_for(server, kLongLease)), admin(options_for(server, kLongLease));
  Semaphore s = waiter.semaphore("dead-wait");
  ASSERT_TRUE(s.try_set_permits(2));
  hold_and_die(server, "dead-wait", 2, 2s);
  const std::int64_t deadline = only_deadline(admin, "dead-wait");
  // Its wait (60 s) and fallback (a third of 10 min) outlast the bound: only
  // the retry at the earliest lease end the script reported can serve it.
  auto got = std::async(std::launch::async, [&] { return s.try_acquire_for(2, 60s); });
  ASSERT_EQ(got.wait_for(20s), std::future_status::ready) << "still waiting after the lease end";
  EXPECT_TRUE(got.get());
  EXPECT_GE(server_ms(admin), deadline);
}

TEST(SemaphoreLayout, HoldersOfTheEarlierLayoutAreReclaimedOnlyOnceTheirLeaseEnded) {
  RedisServer server;
  Client c(options_for(server, kLongLease));
  Semaphore s = c.semaphore("v1");
  ASSERT_TRUE(s.try_set_permits(0));
  // As the earlier layout's scripts leave them: a dead holder of 2 (lease
  // over) and a live one of 1, their permits taken from the count.
  const std::string leases = "distlock_semaphore_leases:{v1}";
  const std::string counts = "distlock_semaphore_holders:{v1}";
  const std::int64_t now = server_ms(c);
  c.command("ZADD", leases, std::to_string(now - 1), "dead", std::to_string(now + 600000), "live");
  c.command("HSET", counts, "dead", "2", "live", "1");
  EXPECT_TRUE(s.try_acquire(2)) << "the dead holder's 2 came back";
  EXPECT_FALSE(s.try_acquire(1)) << "the live holder keeps its 1";
  EXPECT_EQ(c.command("ZRANGE", leases, "0", "-1").as_array().size(), 1u);
  EXPECT_EQ(c.command("HGET", counts, "live").as_string(), "1");
  EXPECT_EQ(c.command("HEXISTS", counts, "dead").as_integer(), 0);
}

TEST(SemaphoreLayout, APermitOfOneIsOnlyALeaseAndACountAndRedissonSeesTheCount) {
  RedisServer server;
  Client c(options_for(server, kLongLease));
  Semaphore s = c.semaphore("one");
  ASSERT_TRUE(s.try_set_permits(3));
  Permit p = s.acquire_permit(1);
  EXPECT_EQ(c.command("ZCARD", holders_key("one")).as_integer(), 1);
  EXPECT_EQ(c.command("EXISTS", "distlock_sem_counts:{one}").as_integer(), 0);
  // Redisson's RSemaphore reads (availablePermits) and takes (tryAcquire)
  // the plain count at `name`.
  EXPECT_EQ(c.command("GET", "one").as_string(), "2");
  Permit two = s.acquire_permit(2);
  const Value counts = c.command("HVALS", "distlock_sem_counts:{one}");
  ASSERT_EQ(counts.as_array().size(), 1u) << "only the Permit of 2 has a count";
  EXPECT_EQ(counts.as_array()[0].as_string(), "2");
  EXPECT_EQ(c.command("GET", "one").as_string(), "0");
  p.release();
  two.release();
  EXPECT_EQ(c.command("GET", "one").as_string(), "3");
  EXPECT_EQ(c.command("EXISTS", holders_key("one"), "distlock_sem_counts:{one}").as_integer(), 0);
}

}  // namespace
}  // namespace distlock
