// Redlock as a member of the Lock family, over five real masters: waiters
// woken by the holder's release (not by their poll), a release whose replies
// are lost on a majority settled in the background, the async forms and
// their cancellation, and one I/O thread per group.
#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "distlock/distlock.hpp"
#include "distlock/lock_async.hpp"
#include "integration/redlock_masters.hpp"
#include "support/tcp_proxy.hpp"
#include "support/test_helpers.hpp"

namespace distlock::redlock_test {
namespace {

using test::eventually;
using test::TcpProxy;

std::string channel_of(const std::string& name) {
  return "distlock_simple_lock__channel:{" + name + "}";
}

// Subscribers of `name`'s channel on every node (the fewest).
long long fewest_subscribers(const Masters& m, const std::string& name) {
  long long fewest = -1;
  for (const auto& a : m.admin) {
    const auto n = a->command("PUBSUB", "NUMSUB", channel_of(name)).as_array()[1].as_integer();
    if (fewest < 0 || n < fewest) fewest = n;
  }
  return fewest;
}

std::size_t threads_of_this_process() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// Waiters' only fallback is a poll far longer than the bounds below, and a
// holder's lease longer still: only the release's publish can wake them.
RedlockOptions no_poll() {
  RedlockOptions o = quick(120s);
  o.retry_delay = std::chrono::hours(1);
  o.retry_jitter = 0ms;
  return o;
}

TEST(RedlockWake, AWaiterIsWokenByTheHoldersReleaseNotByItsPoll) {
  Masters m;
  RedlockGroup holders(m.uris(), no_poll());
  RedlockGroup waiters(m.uris(), no_poll());
  Lease held = holders.lock("rl:wake").acquire();
  auto waiter = std::async(std::launch::async, [&] {
    RedlockLock lock = waiters.lock("rl:wake");
    const bool got = lock.try_lock_for(60s);
    if (got) lock.unlock();
    return got;
  });
  // Waiting (subscribed on every node), not between attempts.
  ASSERT_TRUE(eventually([&] { return fewest_subscribers(m, "rl:wake") > 0; }, 10s));
  held.release();
  ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready)
      << "the release did not wake the waiter (its poll is an hour)";
  EXPECT_TRUE(waiter.get());
}

TEST(RedlockWake, EveryWaiterGetsItInTurnWithEachReleaseWakingTheNext) {
  Masters m;
  RedlockGroup holders(m.uris(), no_poll());
  RedlockGroup waiters(m.uris(), no_poll());
  Lease held = holders.lock("rl:turns").acquire();
  std::atomic<int> inside{0}, overlaps{0}, got{0};
  std::vector<std::future<void>> threads;
  for (int i = 0; i < 4; ++i) {
    threads.push_back(std::async(std::launch::async, [&] {
      RedlockLock lock = waiters.lock("rl:turns");
      if (!lock.try_lock_for(60s)) return;
      if (inside.fetch_add(1) != 0) ++overlaps;
      ++got;
      inside.fetch_sub(1);
      lock.unlock();
    }));
  }
  ASSERT_TRUE(eventually([&] { return fewest_subscribers(m, "rl:turns") > 0; }, 10s));
  held.release();
  for (auto& t : threads) {
    ASSERT_EQ(t.wait_for(40s), std::future_status::ready) << "a waiter was never woken";
  }
  EXPECT_EQ(got.load(), 4);
  EXPECT_EQ(overlaps.load(), 0);
}

// --- Lost releases ------------------------------------------------------------------

TEST(RedlockPendingRelease, AReleaseLostOnAMajorityIsSettledInTheBackgroundAndTheNextIsANewHold) {
  Masters m;
  std::vector<std::unique_ptr<TcpProxy>> proxies;
  std::vector<std::string> uris = m.uris();
  for (std::size_t i : {0u, 2u, 4u}) {
    proxies.push_back(std::make_unique<TcpProxy>(m.servers[i]->port()));
    uris[i] = proxies.back()->uri();
  }
  RedlockGroup group(uris, quick(120s));
  RedlockLock lock = group.lock("rl:lost-release");
  lock.lock();
  const std::string first = m.settled_token("rl:lost-release", 5);
  ASSERT_FALSE(first.empty());
  for (auto& p : proxies) p->hold();
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::timeout) << "two of five confirmed: the outcome is unknown";
  EXPECT_EQ(m.holding("rl:lost-release", first), 3u) << "the held nodes still have it";
  for (auto& p : proxies) p->resume();
  // Asked again, the thread's unlock waits for the pending release and
  // reports how it ended (not not_owner: the unlock counted).
  std::error_code again;
  lock.unlock(again);
  EXPECT_FALSE(again) << again.message();
  EXPECT_TRUE(eventually([&] { return m.with_key("rl:lost-release") == 0; }, 10s))
      << "the release was not settled (the lease is two minutes)";
  lock.lock();
  const std::string second = m.settled_token("rl:lost-release", 5);
  EXPECT_FALSE(second.empty());
  EXPECT_NE(second, first) << "the next acquire is a new holding";
  lock.unlock();
}

// --- Async --------------------------------------------------------------------------

TEST(RedlockAsync, SixtyFourCoroutinesOnOneThreadTakeTurnsOnAGroupLock) {
  Masters m;
  // One Client's threads (its I/O thread, and Asio's resolver thread of its
  // io_context): a group of five masters adds exactly as many.
  std::size_t before = threads_of_this_process();
  auto one = std::make_unique<Client>(m.servers[0]->uri());
  const std::size_t per_client = threads_of_this_process() - before;
  one.reset();
  ASSERT_TRUE(eventually([&] { return threads_of_this_process() == before; }, 10s));
  RedlockGroup group(m.uris(), quick(30s));
  EXPECT_EQ(threads_of_this_process() - before, per_client) << "one I/O thread for five nodes";
  RedlockLock lock = group.lock("rl:coroutines");
  asio::io_context app;
  int inside = 0, overlaps = 0, done = 0;
  constexpr int kCoroutines = 64, kRounds = 2;
  for (int c = 0; c < kCoroutines; ++c) {
    asio::co_spawn(
        app,
        [&]() -> asio::awaitable<void> {
          for (int r = 0; r < kRounds; ++r) {
            Lease lease = co_await lock.async_acquire(asio::use_awaitable);
            if (inside++ != 0) ++overlaps;
            // Yield inside the critical section: another coroutine runs.
            asio::steady_timer t(app, 0ms);
            co_await t.async_wait(asio::use_awaitable);
            --inside;
            co_await lease.async_release(asio::use_awaitable);
            ++done;
          }
        },
        asio::detached);
  }
  auto ran = std::async(std::launch::async, [&] { app.run(); });
  ASSERT_EQ(ran.wait_for(120s), std::future_status::ready) << "the coroutines did not finish";
  EXPECT_EQ(done, kCoroutines * kRounds);
  EXPECT_EQ(overlaps, 0);
  EXPECT_EQ(m.with_key("rl:coroutines"), 0u);
}

TEST(RedlockAsync, ACancelledWaitEndsAbortedAndLeavesNoKeyOnAnyNode) {
  Masters m;
  RedlockGroup holders(m.uris(), no_poll());
  RedlockGroup waiters(m.uris(), no_poll());
  Lease held = holders.lock("rl:cancel-wait").acquire();
  asio::io_context app;
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  waiters.lock("rl:cancel-wait")
      .async_acquire(asio::bind_cancellation_slot(
          signal.slot(), [&](std::error_code ec, Lease) { done.set_value(ec); }));
  ASSERT_TRUE(eventually([&] { return fewest_subscribers(m, "rl:cancel-wait") > 0; }, 10s));
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), asio::error::operation_aborted);
  held.release();
  EXPECT_EQ(m.with_key("rl:cancel-wait"), 0u);
  EXPECT_TRUE(eventually([&] { return fewest_subscribers(m, "rl:cancel-wait") == 0; }, 10s));
}

// The attempt is on its way to every node (held by proxies) when it is
// cancelled; it then wins on all five. What it took is deleted everywhere,
// long before its two-minute lease.
TEST(RedlockAsync, ACancelWhileTheAttemptIsInFlightLeavesNoKeyOnAnyOfTheFiveNodes) {
  Masters m;
  std::vector<std::unique_ptr<TcpProxy>> proxies;
  std::vector<std::string> uris;
  for (auto& server : m.servers) {
    proxies.push_back(std::make_unique<TcpProxy>(server->port()));
    uris.push_back(proxies.back()->uri());
  }
  RedlockOptions o = no_poll();
  o.node_timeout = 20s;  // the held nodes' answers still count when they come
  RedlockGroup group(uris, o);
  RedlockLock warm = group.lock("rl:warm");
  ASSERT_TRUE(warm.try_lock());  // every connection is up
  warm.unlock();
  for (auto& p : proxies) p->hold();
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  group.lock("rl:cancel-flight")
      .async_acquire(asio::bind_cancellation_slot(
          signal.slot(), [&](std::error_code ec, Lease) { done.set_value(ec); }));
  ASSERT_TRUE(eventually(
      [&] {
        for (auto& p : proxies) {
          if (p->pending_bytes() == 0) return false;
        }
        return true;
      },
      10s));
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "cancel waited for the nodes";
  EXPECT_EQ(f.get(), asio::error::operation_aborted);
  for (auto& p : proxies) p->resume();
  for (std::size_t i = 0; i < m.servers.size(); ++i) {
    EXPECT_TRUE(eventually(
        [&] { return m.admin[i]->command("EXISTS", "rl:cancel-flight").as_integer() == 0; }, 10s))
        << "node " << i << " kept the cancelled acquire's key";
  }
}

TEST(RedlockQueries, IsLockedRemainingTtlAndForceUnlockAnswerForTheMajority) {
  Masters m;
  RedlockGroup group(m.uris(), quick(30s));
  RedlockLock lock = group.lock("rl:queries");
  EXPECT_FALSE(lock.is_locked());
  EXPECT_FALSE(lock.remaining_ttl().has_value());
  Lease lease = lock.acquire();
  EXPECT_TRUE(lock.is_locked());
  const auto ttl = lock.remaining_ttl();
  ASSERT_TRUE(ttl.has_value());
  EXPECT_GT(*ttl, 0ms);
  EXPECT_LE(*ttl, 30s);
  // Two nodes lose the key: still held on a majority.
  m.admin[0]->command("DEL", "rl:queries");
  m.admin[1]->command("DEL", "rl:queries");
  EXPECT_TRUE(lock.is_locked());
  // A third: no longer.
  m.admin[2]->command("DEL", "rl:queries");
  EXPECT_FALSE(lock.is_locked());
  EXPECT_FALSE(lock.remaining_ttl().has_value());
  EXPECT_TRUE(lock.force_unlock()) << "two nodes still had a key";
  EXPECT_EQ(m.with_key("rl:queries"), 0u);
  EXPECT_FALSE(lock.force_unlock()) << "nothing left to delete";
}

TEST(RedlockQueries, WithAMajorityDownAQueryIsATimeoutNotAnAnswer) {
  Masters m;
  RedlockGroup group(m.uris(), quick(30s));
  for (std::size_t i : {0u, 1u, 2u}) m.servers[i]->kill();
  std::error_code ec;
  EXPECT_FALSE(group.lock("rl:dark").is_locked(ec));
  EXPECT_EQ(ec, errc::timeout) << ec.message();
}

}  // namespace
}  // namespace distlock::redlock_test
