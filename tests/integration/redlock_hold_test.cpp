// Redlock holds over five real masters (issue 13, item 5): extension with a
// node and with a majority lost, fixed leases, ownership, errors and close.
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
#include "integration/redlock_masters.hpp"
#include "support/test_helpers.hpp"

namespace distlock::redlock_test {
namespace {

using test::eventually;
using test::wait_for_stop;

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
  // The stop token is requested first, the callback runs right after it.
  ASSERT_TRUE(eventually(
      [&] {
        std::lock_guard lock(mu);
        return !events.empty();
      },
      10s));
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
  // Deleted only once every node has it: a SET still in flight would land
  // after the DEL and leave the token on a majority.
  ASSERT_FALSE(m.settled_token("rl:gone", 5).empty());
  for (std::size_t i : {0u, 2u, 3u}) m.admin[i]->command("DEL", "rl:gone");
  ASSERT_TRUE(wait_for_stop(lock.stop_token(), 20s));
  // The stop token is requested first, the callback runs right after it.
  ASSERT_TRUE(eventually([&] { return taken.load() > 0; }, 10s));
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
}  // namespace distlock::redlock_test
