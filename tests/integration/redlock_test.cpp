// Redlock over five independent masters (issue 13, item 5), against real
// redis-server processes: acquisition and exclusion with all up; with one or
// two nodes down, paused or behind a proxy that holds their traffic; three
// down. Validity: redlock_validity_test.cpp; holds: redlock_hold_test.cpp.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "integration/redlock_masters.hpp"
#include "support/history.hpp"
#include "support/refusing_port.hpp"
#include "support/tcp_proxy.hpp"
#include "support/test_helpers.hpp"

namespace distlock::redlock_test {
namespace {

using test::eventually;
using test::TcpProxy;

TEST(Redlock, ALockIsHeldOnEveryNodeWithOneTokenAndUnlockDeletesItEverywhere) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  RedlockLock lock = group.lock("rl:all");
  lock.lock();
  ASSERT_TRUE(lock.is_held_by_current_thread());
  const std::string token = m.settled_token("rl:all", 5);
  EXPECT_EQ(token.size(), 32u) << "a 128-bit token in hex, on all five nodes";
  for (auto& a : m.admin) EXPECT_GT(a->command("PTTL", "rl:all").as_integer(), 0);
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(m.with_key("rl:all"), 0u);
}

TEST(Redlock, AnotherHolderIsExcludedUntilTheUnlock) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  RedlockGroup other(m.uris(), quick());
  RedlockLease held = group.lock("rl:ex").acquire();
  ASSERT_TRUE(held.valid());
  EXPECT_FALSE(other.lock("rl:ex").try_acquire().has_value());
  EXPECT_FALSE(other.lock("rl:ex").try_acquire_for(100ms).has_value());
  held.release();
  EXPECT_TRUE(other.lock("rl:ex").try_acquire().has_value());
}

TEST(Redlock, AWaiterGetsTheLockOnceTheHolderReleases) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  RedlockGroup other(m.uris(), quick());
  RedlockLease held = group.lock("rl:wait").acquire();
  auto waiter = std::async(std::launch::async,
                           [&] { return other.lock("rl:wait").try_acquire_for(20s).has_value(); });
  ASSERT_EQ(waiter.wait_for(100ms), std::future_status::timeout) << "got in while held";
  held.release();
  EXPECT_TRUE(waiter.get());
}

// Several threads, each with its own group (its own connections), take two
// names in turn; every stay is recorded and the checker proves no two
// holders of a name were inside at once while both believed their hold
// valid. Inside each hold the thread also increments the name's counter by
// a read, a yield and a write: two holders inside at once lose an increment,
// so a final count below the number of holds is an overlap even when the
// timestamps miss it. (Relaxed atomics rather than a plain int: the same
// lost update, without a data race the compiler may assume away.)
TEST(Redlock, ThreadsOfSeparateGroupsNeverOverlapOnAName) {
  Masters m;
  std::mutex records_mutex;
  std::vector<test::HoldRecord> records;
  std::array<std::atomic<long>, 2> counters{};
  std::array<std::atomic<long>, 2> holds{};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  const auto until = std::chrono::steady_clock::now() + 3s;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      RedlockGroup group(m.uris(), quick());
      int round = 0;
      while (std::chrono::steady_clock::now() < until) {
        const int which = round++ % 2;
        const std::string name = "rl:mx:" + std::to_string(which);
        auto lease = group.lock(name).try_acquire_for(5s);
        if (!lease) continue;
        test::HoldRecord r;
        r.name = name;
        r.thread = t;
        r.enter_ns = test::steady_now_ns();
        const long seen = counters[which].load(std::memory_order_relaxed);
        std::this_thread::yield();
        counters[which].store(seen + 1, std::memory_order_relaxed);
        r.exit_ns = test::steady_now_ns();
        r.lease_deadline_ns = test::steady_ns(lease->deadline());
        if (!lease->valid()) r.lease_deadline_ns = std::min(r.lease_deadline_ns, r.enter_ns);
        ++holds[which];
        std::error_code ec;
        lease->release(ec);
        if (ec) failed = true;
        std::lock_guard lock(records_mutex);
        records.push_back(r);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(failed) << "a release was not confirmed by a majority";
  const auto check = test::check_mutual_exclusion(records);
  EXPECT_TRUE(check.ok()) << check.report();
  EXPECT_EQ(check.names_checked, 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(counters[i].load(), holds[i].load()) << "increments lost on rl:mx:" << i;
  }
  EXPECT_GT(records.size(), 50u) << "too few holds to prove anything";
}

// --- A minority down -------------------------------------------------------------

TEST(Redlock, StillAcquiresWithOneNodeKilled) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  m.servers[4]->kill();
  RedlockLease lease = group.lock("rl:k1").acquire();
  EXPECT_TRUE(lease.valid());
  EXPECT_FALSE(m.settled_token("rl:k1", 4).empty()) << "one token on the four live nodes";
}

TEST(Redlock, StillAcquiresAndReleasesWithTwoNodesKilled) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  m.servers[0]->kill();
  m.servers[3]->kill();
  RedlockLock lock = group.lock("rl:k2");
  ASSERT_TRUE(lock.try_lock());
  EXPECT_TRUE(lock.lease_valid());
  EXPECT_EQ(m.holding("rl:k2", token_on(m, 1, "rl:k2")), 3u);
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_FALSE(ec) << "three of five is a majority: " << ec.message();
  EXPECT_EQ(m.with_key("rl:k2"), 0u);
}

TEST(Redlock, AGroupWithANodeDownFromTheStartStillAcquires) {
  Masters m(2);
  test::RefusingPort refusing;
  std::vector<std::string> uris = m.uris();
  uris.push_back("redis://127.0.0.1:" + std::to_string(refusing.port()) +
                 "?connect_timeout_ms=300");
  RedlockGroup group(uris, quick());
  EXPECT_EQ(group.quorum(), 2u);
  EXPECT_TRUE(group.lock("rl:start-down").try_acquire().has_value());
}

TEST(Redlock, StillAcquiresWithTwoNodesPausedWithinTheValidity) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  m.servers[1]->pause();
  m.servers[2]->pause();
  const auto before = std::chrono::steady_clock::now();
  auto lease = group.lock("rl:p2").try_acquire();
  ASSERT_TRUE(lease.has_value());
  EXPECT_TRUE(lease->valid());
  // At most a lease after the call; the exact count from the first send is
  // TheValidityIsCountedFromBeforeTheFirstSendWhenTheMajorityAnswersLate.
  EXPECT_LE(lease->deadline(), before + 30s);
  lease->release();
  m.servers[1]->resume();
  m.servers[2]->resume();
  // The paused nodes run the SET and then the compare-and-delete sent after
  // it on the same connection: nothing is left behind.
  EXPECT_TRUE(eventually([&] { return m.with_key("rl:p2") == 0; }, 10s));
}

TEST(Redlock, StillAcquiresWithTwoNodesBehindAProxyThatHoldsTheirTraffic) {
  Masters m;
  TcpProxy p1(m.servers[1]->port());
  TcpProxy p3(m.servers[3]->port());
  std::vector<std::string> uris = m.uris();
  uris[1] = p1.uri();
  uris[3] = p3.uri();
  RedlockGroup group(uris, quick());
  p1.hold();
  p3.hold();
  RedlockLock lock = group.lock("rl:proxy");
  ASSERT_TRUE(lock.try_lock());
  EXPECT_TRUE(lock.lease_valid());
  const std::string token = token_on(m, 0, "rl:proxy");
  EXPECT_EQ(m.holding("rl:proxy", token), 3u) << "the held nodes have not seen the SET";
  EXPECT_GT(p1.pending_bytes(), 0u);
  lock.unlock();
  p1.resume();
  p3.resume();
  EXPECT_TRUE(eventually([&] { return m.with_key("rl:proxy") == 0; }, 10s))
      << "the late SETs were not undone by the unlock behind them";
}

// Parallel fan-out: with every node behind a proxy that holds its traffic,
// each of the five nodes receives its SET before any node has answered. One
// node at a time would leave the other four without a request for a whole
// node_timeout (10 s here; the wait below is bounded at 5 s).
TEST(Redlock, AnAcquireSendsToEveryNodeBeforeAnyNodeHasAnswered) {
  Masters m;
  std::vector<std::unique_ptr<TcpProxy>> proxies;
  std::vector<std::string> uris;
  for (auto& server : m.servers) {
    proxies.push_back(std::make_unique<TcpProxy>(server->port()));
    uris.push_back(proxies.back()->uri());
  }
  auto options = quick(60s);
  options.node_timeout = 10s;
  RedlockGroup group(uris, options);
  RedlockLock warm = group.lock("rl:warm");  // connections up before the hold
  ASSERT_TRUE(warm.try_lock());
  warm.unlock();
  std::vector<std::size_t> before;
  for (auto& p : proxies) before.push_back(p->forwarded_upstream() + p->pending_bytes());
  for (auto& p : proxies) p->hold();
  RedlockLock lock = group.lock("rl:parallel");
  auto got = std::async(std::launch::async, [&] { return lock.try_lock(); });
  const bool all_sent = eventually(
      [&] {
        for (auto& p : proxies) {
          if (p->pending_bytes() == 0) return false;
        }
        return true;
      },
      5s);
  for (auto& p : proxies) p->resume();
  EXPECT_TRUE(all_sent) << "some node had no request while the others were held";
  EXPECT_TRUE(got.get());
  lock.unlock();
}

// --- A majority down ---------------------------------------------------------------

TEST(Redlock, WithThreeNodesKilledItFailsCleanlyAndReleasesWhatItTook) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  m.servers[0]->kill();
  m.servers[2]->kill();
  m.servers[4]->kill();
  RedlockLock lock = group.lock("rl:k3");
  std::error_code ec;
  EXPECT_FALSE(lock.try_lock(ec));
  EXPECT_FALSE(ec) << "nodes down are votes against, not errors: " << ec.message();
  EXPECT_FALSE(lock.is_held_by_current_thread());
  // The two nodes that answered had their keys deleted before try_lock
  // returned (the lease is 30 s: nothing expired meanwhile).
  EXPECT_EQ(m.with_key("rl:k3"), 0u);
  EXPECT_FALSE(lock.try_lock_for(300ms)) << "waiting retries, and still fails cleanly";
  EXPECT_EQ(m.with_key("rl:k3"), 0u);
}

TEST(Redlock, WithThreeNodesPausedItFailsWithinTheNodeTimeoutAndTheirLateKeysAreDeletedToo) {
  Masters m;
  // The nodes' own command timeout is a minute: only node_timeout (200 ms)
  // can end the attempt within the 20 s bound below.
  std::vector<std::string> uris = m.uris();
  for (auto& u : uris) u += "?command_timeout_ms=60000";
  RedlockGroup group(uris, quick());
  for (std::size_t i : {1u, 2u, 3u}) m.servers[i]->pause();
  auto attempt =
      std::async(std::launch::async, [&] { return group.lock("rl:p3").try_acquire().has_value(); });
  ASSERT_EQ(attempt.wait_for(20s), std::future_status::ready) << "waited for the paused nodes";
  EXPECT_FALSE(attempt.get());
  EXPECT_EQ(m.with_key("rl:p3", {0, 4}), 0u) << "the running nodes' keys are deleted at once";
  for (std::size_t i : {1u, 2u, 3u}) m.servers[i]->resume();
  EXPECT_TRUE(eventually([&] { return m.with_key("rl:p3") == 0; }, 10s))
      << "a paused node kept the key its late SET wrote";
}

// Three nodes of five behind proxies: the outage holds their traffic and
// drops their connections (the group sees its connections reset and its
// reconnects answered by nothing, as with nodes gone off the network), and
// ends by letting the traffic through again. The nodes keep their ports:
// nothing has to bind them again.
TEST(Redlock, LockWaitsThroughAMajorityOutageAndGetsItOnceTheNodesReturn) {
  Masters m;
  std::vector<std::unique_ptr<TcpProxy>> proxies;
  std::vector<std::string> uris = m.uris();
  for (std::size_t i : {0u, 1u, 2u}) {
    proxies.push_back(std::make_unique<TcpProxy>(m.servers[i]->port()));
    uris[i] = proxies.back()->uri();
  }
  RedlockGroup group(uris, quick());
  for (auto& p : proxies) {
    p->hold();
    p->drop_all();
  }
  const auto calls_before = test::evalsha_calls(*m.admin[3]);
  auto waiter = std::async(std::launch::async, [&] {
    RedlockLock lock = group.lock("rl:outage");
    lock.lock();  // retries on the jittered delay; never throws for a node
    const bool held = lock.is_held_by_current_thread();
    lock.unlock();
    return held;
  });
  // Two whole attempts (each a SET and its undo on node 3) ran during the
  // outage and neither got the lock.
  const bool retried =
      eventually([&] { return test::evalsha_calls(*m.admin[3]) >= calls_before + 4; }, 20s);
  const bool held_early = waiter.wait_for(0s) == std::future_status::ready;
  for (auto& p : proxies) p->resume();
  EXPECT_TRUE(retried) << "the waiter did not retry on the two live nodes";
  EXPECT_FALSE(held_early) << "lock() returned with 2 of 5 nodes";
  ASSERT_EQ(waiter.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(waiter.get());
}

}  // namespace
}  // namespace distlock::redlock_test
