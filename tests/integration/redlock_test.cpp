// Redlock over five independent masters (issue 13, item 5), against real
// redis-server processes: acquisition and exclusion with all up; with one or
// two nodes down, paused or behind a proxy that holds their traffic; three
// down; a validity that is not positive; extension with a node and with a
// majority lost.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "distlock/redlock.hpp"
#include "support/history.hpp"
#include "support/redis_server.hpp"
#include "support/refusing_port.hpp"
#include "support/tcp_proxy.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::RedisServer;
using test::TcpProxy;
using test::wait_for_stop;

// Five masters, a direct admin Client on each, and the URIs a group uses.
struct Masters {
  std::vector<std::unique_ptr<RedisServer>> servers;
  std::vector<std::unique_ptr<Client>> admin;

  explicit Masters(int n = 5) {
    for (int i = 0; i < n; ++i) {
      servers.push_back(std::make_unique<RedisServer>());
      admin.push_back(std::make_unique<Client>(servers.back()->uri()));
    }
  }
  std::vector<std::string> uris() const {
    std::vector<std::string> out;
    // Short reconnect backoff: a restarted node is back within 100 ms.
    for (const auto& s : servers) out.push_back(s->uri());
    return out;
  }
  // The value of `key` on node i, read through redis-cli ("" when absent):
  // works on a node whose admin connection is gone.
  std::string value(std::size_t i, const std::string& key) const {
    return servers[i]->cli({"GET", key});
  }
  // How many nodes hold `key` with `token`.
  std::size_t holding(const std::string& key, const std::string& token) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < servers.size(); ++i) {
      if (servers[i]->running() && value(i, key) == token) ++n;
    }
    return n;
  }
  // How many running nodes have `key` at all (none may be paused).
  std::size_t with_key(const std::string& key) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < servers.size(); ++i) {
      if (servers[i]->running() && !value(i, key).empty()) ++n;
    }
    return n;
  }
  // How many of the nodes `which` have `key`.
  std::size_t with_key(const std::string& key, std::initializer_list<std::size_t> which) const {
    std::size_t n = 0;
    for (std::size_t i : which) n += value(i, key).empty() ? 0 : 1;
    return n;
  }
};

RedlockOptions quick(std::chrono::milliseconds lease = 30s) {
  RedlockOptions o;
  o.lease = lease;
  // Generous for a loaded 2-core machine: only a node that does not answer
  // at all waits it out.
  o.node_timeout = 200ms;
  o.retry_delay = 20ms;
  o.retry_jitter = 20ms;
  return o;
}

// The token a holder's key has on node 0 (all holding nodes agree).
std::string token_on(const Masters& m, std::size_t node, const std::string& key) {
  return m.value(node, key);
}

TEST(Redlock, ALockIsHeldOnEveryNodeWithOneTokenAndUnlockDeletesItEverywhere) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  RedlockLock lock = group.lock("rl:all");
  lock.lock();
  ASSERT_TRUE(lock.is_held_by_current_thread());
  const std::string token = token_on(m, 0, "rl:all");
  EXPECT_EQ(token.size(), 32u) << "a 128-bit token in hex";
  EXPECT_EQ(m.holding("rl:all", token), 5u);
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
// valid.
TEST(Redlock, ThreadsOfSeparateGroupsNeverOverlapOnAName) {
  Masters m;
  std::mutex records_mutex;
  std::vector<test::HoldRecord> records;
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  const auto until = std::chrono::steady_clock::now() + 3s;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      RedlockGroup group(m.uris(), quick());
      int round = 0;
      while (std::chrono::steady_clock::now() < until) {
        const std::string name = "rl:mx:" + std::to_string(round++ % 2);
        auto lease = group.lock(name).try_acquire_for(5s);
        if (!lease) continue;
        test::HoldRecord r;
        r.name = name;
        r.thread = t;
        r.enter_ns = test::steady_now_ns();
        std::this_thread::yield();
        r.exit_ns = test::steady_now_ns();
        r.lease_deadline_ns = test::steady_ns(lease->deadline());
        if (!lease->valid()) r.lease_deadline_ns = std::min(r.lease_deadline_ns, r.enter_ns);
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
  EXPECT_GT(records.size(), 50u) << "too few holds to prove anything";
}

// --- A minority down -------------------------------------------------------------

TEST(Redlock, StillAcquiresWithOneNodeKilled) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  m.servers[4]->kill();
  RedlockLease lease = group.lock("rl:k1").acquire();
  EXPECT_TRUE(lease.valid());
  EXPECT_EQ(m.holding("rl:k1", token_on(m, 0, "rl:k1")), 4u);
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
  EXPECT_LE(lease->deadline(), before + 30s) << "validity counted from the first send";
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

// --- Validity --------------------------------------------------------------------

TEST(Redlock, AnAttemptWhoseValidityIsNotPositiveIsRefusedAndUndone) {
  Masters m;
  RedlockOptions o = quick(10s);
  // 10 s - (10 s * 0.9999 + 2 ms) = -1 ms: every node says yes, and the
  // drift margin still leaves no time to use it.
  o.clock_drift_factor = 0.9999;
  RedlockGroup group(m.uris(), o);
  std::error_code ec;
  EXPECT_FALSE(group.lock("rl:drift").try_acquire(ec).has_value());
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(m.with_key("rl:drift"), 0u) << "a refused attempt leaves no key";
}

TEST(Redlock, AnExplicitLeaseNoLongerThanTheTwoMillisecondMarginIsRefused) {
  Masters m;
  RedlockOptions o = quick();
  o.clock_drift_factor = 0;
  RedlockGroup group(m.uris(), o);
  EXPECT_FALSE(group.lock("rl:short").try_lock_for(0ms, 2ms));
  EXPECT_TRUE(group.lock("rl:short").try_lock_for(0ms, 5s)) << "a longer lease is fine";
}

// --- Extension -------------------------------------------------------------------

TEST(Redlock, ExtensionWithOneNodeKilledKeepsTheLease) {
  Masters m;
  std::atomic<int> lost{0};
  RedlockOptions o = quick(600ms);
  o.on_lease_lost = [&](const LeaseLostEvent&) { ++lost; };
  RedlockGroup group(m.uris(), o);
  RedlockLease lease = group.lock("rl:ext1").acquire();
  const auto first = lease.deadline();
  m.servers[2]->kill();
  // Past the first lease entirely: only extensions can keep it valid.
  ASSERT_TRUE(eventually([&] { return lease.deadline() > first + 700ms; }, 20s))
      << "the watchdog did not extend on the four remaining nodes";
  EXPECT_TRUE(lease.valid());
  EXPECT_FALSE(lease.stop_token().stop_requested());
  EXPECT_EQ(lost.load(), 0);
  EXPECT_EQ(m.holding("rl:ext1", token_on(m, 0, "rl:ext1")), 4u);
}

TEST(Redlock, ExtensionWithAMajorityKilledSignalsTheLossAtOnce) {
  Masters m;
  std::mutex mu;
  std::vector<LeaseLostEvent> events;
  // The extension at 3 s fails; the two live nodes' keys, extended then,
  // would live 9 s more if nothing deleted them.
  RedlockOptions o = quick(9s);
  o.on_lease_lost = [&](const LeaseLostEvent& e) {
    std::lock_guard lock(mu);
    events.push_back(e);
  };
  RedlockGroup group(m.uris(), o);
  RedlockLease lease = group.lock("rl:ext3").acquire();
  for (std::size_t i : {0u, 1u, 4u}) m.servers[i]->kill();
  // The first extension (at a third of the lease) reaches two nodes of five.
  ASSERT_TRUE(wait_for_stop(lease.stop_token(), 20s));
  EXPECT_FALSE(lease.valid());
  std::lock_guard lock(mu);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].name, "rl:ext3");
  EXPECT_EQ(events[0].reason, LeaseLostEvent::Reason::expired);
  // What was left on the two live nodes is deleted, not left to block others.
  EXPECT_TRUE(eventually([&] { return m.with_key("rl:ext3") == 0; }, 5s));
}

TEST(Redlock, ExtensionFindingTheTokenGoneOnAMajoritySignalsTaken) {
  Masters m;
  std::atomic<int> taken{0};
  RedlockOptions o = quick(600ms);
  o.on_lease_lost = [&](const LeaseLostEvent& e) {
    if (e.reason == LeaseLostEvent::Reason::taken) ++taken;
  };
  RedlockGroup group(m.uris(), o);
  RedlockLock lock = group.lock("rl:gone");
  lock.lock();
  for (std::size_t i : {0u, 2u, 3u}) m.admin[i]->command("DEL", "rl:gone");
  ASSERT_TRUE(wait_for_stop(lock.stop_token(), 20s));
  EXPECT_EQ(taken.load(), 1);
  EXPECT_FALSE(lock.lease_valid());
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
}

TEST(Redlock, AFixedLeaseIsNeverExtendedAndIsLostWhenItRunsOut) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  auto lease = group.lock("rl:fixed").try_acquire_for(0ms, 300ms);
  ASSERT_TRUE(lease.has_value());
  const auto deadline = lease->deadline();
  ASSERT_TRUE(wait_for_stop(lease->stop_token(), 20s));
  EXPECT_EQ(lease->deadline(), deadline) << "a fixed lease was extended";
  EXPECT_FALSE(lease->valid());
}

// --- Ownership, errors, close ------------------------------------------------------

TEST(Redlock, TheHoldingThreadCannotTakeItAgain) {
  Masters m(3);
  RedlockGroup group(m.uris(), quick());
  RedlockLock lock = group.lock("rl:own");
  lock.lock();
  EXPECT_FALSE(group.lock("rl:own").try_lock()) << "not reentrant, through any handle";
  std::error_code ec;
  lock.lock(ec);
  EXPECT_EQ(ec, errc::invalid_argument);
  std::async(std::launch::async, [&] {
    std::error_code e;
    lock.unlock(e);
    EXPECT_EQ(e, errc::not_owner) << "another thread's unlock";
  }).get();
  EXPECT_TRUE(lock.is_held_by_current_thread());
  lock.unlock();
}

TEST(Redlock, AMajorityOfErrorRepliesIsAServerError) {
  Masters m(3);
  for (auto& a : m.admin) a->command("CONFIG", "SET", "maxmemory", "1");
  RedlockGroup group(m.uris(), quick());
  try {
    group.lock("rl:oom").try_lock();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::server_error);
    EXPECT_NE(std::string(e.what()).find("OOM"), std::string::npos) << e.what();
  }
  for (auto& a : m.admin) a->command("CONFIG", "SET", "maxmemory", "0");
}

TEST(Redlock, CloseMarksHoldsLostAndEndsWaits) {
  Masters m(3);
  RedlockGroup group(m.uris(), quick());
  RedlockGroup other(m.uris(), quick());
  RedlockLease held = other.lock("rl:close").acquire();
  RedlockLease mine = group.lock("rl:close2").acquire();
  auto waiter = std::async(std::launch::async, [&] {
    std::error_code ec;
    group.lock("rl:close").try_acquire_for(60s, std::nullopt, ec);
    return ec;
  });
  ASSERT_EQ(waiter.wait_for(100ms), std::future_status::timeout);
  group.close();
  EXPECT_EQ(waiter.get(), errc::closed);
  EXPECT_TRUE(mine.stop_token().stop_requested());
  std::error_code ec;
  mine.release(ec);
  EXPECT_EQ(ec, errc::closed);
}

TEST(Redlock, TwoNodesNeedBothAndOneNodeIsItsOwnMajority) {
  Masters m(2);
  RedlockGroup pair(m.uris(), quick());
  EXPECT_EQ(pair.quorum(), 2u);
  m.servers[1]->kill();
  EXPECT_FALSE(pair.lock("rl:two").try_lock());
  RedlockGroup single({m.servers[0]->uri()}, quick());
  EXPECT_EQ(single.quorum(), 1u);
  EXPECT_TRUE(single.lock("rl:one").try_lock());
}

}  // namespace
}  // namespace distlock
