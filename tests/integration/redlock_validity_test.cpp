// Redlock's validity over five real masters: counted from before the first
// request is sent, whatever the nodes' answers take, and an attempt whose
// validity is not positive refused and undone.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "integration/redlock_masters.hpp"
#include "support/tcp_proxy.hpp"
#include "support/test_helpers.hpp"

namespace distlock::redlock_test {
namespace {

using test::eventually;
using test::TcpProxy;

// The validity is counted from before the first request leaves, not from the
// replies. Three nodes of five (every majority includes one of them) sit
// behind proxies that hold their traffic, so the acquire cannot succeed
// before their replies come; the test reads the clock once all three SETs
// are held (so after they were sent), keeps the replies back for a second
// more, as slow nodes would, and then lets them through. The deadline must
// be no later than that reading + lease - drift; counted from a reply it
// would be about a second later.
TEST(Redlock, TheValidityIsCountedFromBeforeTheFirstSendWhenTheMajorityAnswersLate) {
  Masters m;
  std::vector<std::unique_ptr<TcpProxy>> proxies;
  std::vector<std::string> uris = m.uris();
  for (std::size_t i : {0u, 2u, 4u}) {
    proxies.push_back(std::make_unique<TcpProxy>(m.servers[i]->port()));
    uris[i] = proxies.back()->uri();
  }
  // node_timeout far beyond the second the replies are held.
  RedlockOptions o = quick(10s);
  o.node_timeout = 8s;
  RedlockGroup group(uris, o);
  RedlockLock warm = group.lock("rl:late-warm");  // connections up before the hold
  ASSERT_TRUE(warm.try_lock());
  warm.unlock();
  for (auto& p : proxies) p->hold();
  const auto before = std::chrono::steady_clock::now();
  auto acquiring =
      std::async(std::launch::async, [&] { return group.lock("rl:late").try_acquire(); });
  // A node's pending bytes are this attempt's SET: nothing else is sent.
  const bool all_held = eventually(
      [&] {
        for (auto& p : proxies) {
          if (p->pending_bytes() == 0) return false;
        }
        return true;
      },
      5s);
  const auto sent_by = std::chrono::steady_clock::now();
  // The slow majority: the fault injected, not a wait for an event.
  std::this_thread::sleep_for(1s);
  for (auto& p : proxies) p->resume();
  ASSERT_TRUE(all_held) << "a held node never received its SET";
  auto lease = acquiring.get();
  ASSERT_TRUE(lease.has_value());
  // lease * clock_drift_factor + 2 ms, as the group computes it.
  const auto drift = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::duration<double, std::milli>(
                             static_cast<double>(o.lease.count()) * o.clock_drift_factor)) +
                     2ms;
  EXPECT_LE(lease->deadline(), sent_by + o.lease - drift)
      << "the validity was counted from after the requests were sent, "
      << std::chrono::duration_cast<std::chrono::milliseconds>(lease->deadline() -
                                                               (sent_by + o.lease - drift))
             .count()
      << " ms too late";
  EXPECT_GE(lease->deadline(), before + o.lease - drift) << "counted from before the call";
  lease->release();
}

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
  // Waiting up to 10 s: one attempt alone can miss its majority on a loaded
  // machine (a node slower than the 200 ms node timeout), and that is not
  // what this proves.
  EXPECT_TRUE(group.lock("rl:short").try_lock_for(10s, 5s)) << "a longer lease is fine";
}

}  // namespace
}  // namespace distlock::redlock_test
