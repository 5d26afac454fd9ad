// The canonical SET NX lock (SimpleLock) against real redis-server processes.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <atomic>
#include <cctype>
#include <chrono>
#include <future>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"
#include "sync/simple_lock_poll.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

template <class F>
auto on_other_thread(F f) {
  return std::async(std::launch::async, std::move(f)).get();
}

std::string value_of(Client& c, const std::string& key) {
  const Value v = c.command("GET", key);
  return v.is_nil() ? std::string() : v.as_string();
}

// True once someone (a waiter of `name`) is subscribed to its unlock channel.
bool waiter_subscribed(Client& c, const std::string& name) {
  return eventually(
      [&] {
        const Value v =
            c.command("PUBSUB", "NUMSUB", "distlock_simple_lock__channel:{" + name + "}");
        return v.as_array()[1].as_integer() > 0;
      },
      10s);
}

using test::evalsha_calls;

// Sets the SimpleLock poll cap for the handles made in its scope, and puts
// the previous one back.
class PollCap {
 public:
  explicit PollCap(std::chrono::milliseconds cap) : before_(sync::simple_lock_poll_cap()) {
    sync::set_simple_lock_poll_cap(cap);
  }
  ~PollCap() { sync::set_simple_lock_poll_cap(before_); }
  PollCap(const PollCap&) = delete;
  PollCap& operator=(const PollCap&) = delete;

 private:
  std::chrono::milliseconds before_;
};

// True once a waiter has made `attempts` more acquire attempts than
// `before` counted: with nothing published, only its poll makes them.
bool polled(Client& c, long long before, int attempts) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (evalsha_calls(c) >= before + attempts) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

bool is_printable_token(const std::string& s) {
  if (s.size() < 16) return false;
  for (unsigned char ch : s) {
    if (!std::isxdigit(ch)) return false;
  }
  return true;
}

TEST(SimpleLock, HoldsAStringKeyNamedAfterTheLockWithAFreshPrintableTokenAndAPttl) {
  RedisServer server;
  Client client(options_for(server, 10s));
  SimpleLock lock = client.simple_lock("raw");
  lock.lock();
  EXPECT_EQ(client.command("TYPE", "raw").as_string(), "string");
  const std::string first = value_of(client, "raw");
  EXPECT_TRUE(is_printable_token(first)) << "token '" << first << "'";
  EXPECT_GE(first.size(), 32u) << "128 bits in hex";
  const auto pttl = client.command("PTTL", "raw").as_integer();
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, 10000) << "the watchdog lease";
  EXPECT_EQ(client.command("KEYS", "*").as_array().size(), 1u) << "one key and nothing else";
  lock.unlock();
  EXPECT_EQ(client.command("EXISTS", "raw").as_integer(), 0);
  lock.lock(5s);
  const std::string second = value_of(client, "raw");
  EXPECT_NE(first, second) << "every acquisition has its own token";
  EXPECT_LE(client.command("PTTL", "raw").as_integer(), 5000) << "the fixed lease";
  lock.unlock();
}

TEST(SimpleLock, TheHolderThreadsTryLockReturnsFalseAndItsLockThrowsInvalidArgument) {
  RedisServer server;
  Client client(options_for(server));
  SimpleLock lock = client.simple_lock("once");
  lock.lock();
  const std::string token = value_of(client, "once");
  EXPECT_FALSE(lock.try_lock());
  EXPECT_FALSE(lock.try_lock_for(50ms));
  // Bounded: a lock() that waits for itself (the bug this refusal prevents)
  // gets the key deleted under it after 20 s, so it returns and the test
  // fails instead of hanging.
  std::promise<void> refused;
  std::thread unblock([&, done = refused.get_future()] {
    if (done.wait_for(20s) == std::future_status::timeout) {
      Client(options_for(server)).command("DEL", "once");
    }
  });
  bool returned = false;
  try {
    lock.lock();
    returned = true;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("not reentrant"), std::string::npos) << e.what();
  }
  refused.set_value();
  unblock.join();
  ASSERT_FALSE(returned) << "lock() by the holder waited for itself";
  std::error_code ec;
  lock.lock(1s, ec);
  EXPECT_EQ(ec, errc::invalid_argument);
  EXPECT_EQ(value_of(client, "once"), token) << "the refused calls changed nothing";
  lock.unlock(ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(client.command("EXISTS", "once").as_integer(), 0) << "one unlock frees it";
}

TEST(SimpleLock, AnotherClientIsRefusedAndItsUnlockIsNotOwnerAndLeavesTheKey) {
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  SimpleLock held = a.simple_lock("shared");
  held.lock();
  const std::string token = value_of(a, "shared");
  SimpleLock other = b.simple_lock("shared");
  EXPECT_FALSE(other.try_lock());
  EXPECT_FALSE(other.try_acquire().has_value());
  EXPECT_TRUE(other.is_locked());
  EXPECT_FALSE(other.is_held_by_current_thread());
  EXPECT_TRUE(held.is_held_by_current_thread());
  std::error_code ec;
  other.unlock(ec);
  EXPECT_EQ(ec, errc::not_owner);
  EXPECT_EQ(value_of(a, "shared"), token);
  held.unlock();
}

TEST(SimpleLock, AnotherThreadOfTheSameHandleIsNotTheOwner) {
  RedisServer server;
  Client client(options_for(server));
  SimpleLock lock = client.simple_lock("threads");
  lock.lock();
  const auto [got, held, unlock_ec] = on_other_thread([&] {
    std::error_code ec;
    const bool g = lock.try_lock();
    const bool h = lock.is_held_by_current_thread();
    lock.unlock(ec);
    return std::tuple{g, h, ec};
  });
  EXPECT_FALSE(got);
  EXPECT_FALSE(held);
  EXPECT_EQ(unlock_ec, errc::not_owner);
  EXPECT_TRUE(lock.is_held_by_current_thread());
  lock.unlock();
}

TEST(SimpleLock, AFixedLeaseExpiresForOthersAndTheLateUnlockIsLeaseLostAndKeepsTheNewKey) {
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  SimpleLock first = a.simple_lock("fixed");
  first.lock(500ms);
  EXPECT_LE(a.command("PTTL", "fixed").as_integer(), 500);
  SimpleLock second = b.simple_lock("fixed");
  ASSERT_TRUE(second.try_lock_for(10s)) << "the 500 ms lease never expired";
  const std::string token = value_of(b, "fixed");
  EXPECT_FALSE(first.lease_valid());
  std::error_code ec;
  first.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
  EXPECT_EQ(value_of(b, "fixed"), token) << "the late unlock deleted the new holder's key";
  second.unlock();
}

TEST(SimpleLock, TheWatchdogKeepsRenewingTheKeyPastItsTimeout) {
  RedisServer server;
  Client holder(options_for(server, 600ms));
  Client other(options_for(server));
  SimpleLock lock = holder.simple_lock("watched");
  lock.lock();
  const std::string token = value_of(other, "watched");
  SimpleLock rival = other.simple_lock("watched");
  // An observation window of several leases: without renewal the key is gone
  // after 600 ms.
  const auto end = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < end) {
    ASSERT_EQ(value_of(other, "watched"), token) << "the lease lapsed";
    ASSERT_FALSE(rival.try_lock());
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(lock.lease_valid());
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_FALSE(ec) << ec.message();
}

TEST(SimpleLock, TheHolderIsToldWhenItsKeyIsReplacedBehindItsBack) {
  RedisServer server;
  Client holder(options_for(server, 600ms));
  Client other(options_for(server));
  SimpleLock lock = holder.simple_lock("stolen");
  lock.lock();
  other.command("SET", "stolen", "someone-else");
  EXPECT_FALSE(lock.is_held_by_current_thread());
  std::promise<void> lost;
  std::stop_callback cb(lock.stop_token(), [&] { lost.set_value(); });
  ASSERT_EQ(lost.get_future().wait_for(10s), std::future_status::ready)
      << "the watchdog's compare never failed";
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
  EXPECT_EQ(value_of(other, "stolen"), "someone-else");
}

// Every fallback is longer than the 20 s bound: the holder's lease and the
// waiter's poll cap are 10 min, and so is the waiter's own wait (no last
// attempt at its deadline). Only the unlock's message can let it in.
TEST(SimpleLock, AWaiterIsWokenByTheMessageOfADistlockUnlock) {
  const PollCap no_poll(10min);
  RedisServer server;
  Client a(options_for(server, 10min));
  Client b(options_for(server, 10min));
  SimpleLock held = a.simple_lock("handoff");
  held.lock();
  SimpleLock waiter = b.simple_lock("handoff");
  const long long before = evalsha_calls(a);
  auto got = std::async(std::launch::async,
                        [&] { return waiter.try_lock_for(10min) && (waiter.unlock(), true); });
  ASSERT_TRUE(waiter_subscribed(a, "handoff"));
  // Its attempt after subscribing (the second) found the key held: from then
  // on only a message can wake it.
  ASSERT_TRUE(polled(a, before, 2)) << "the waiter did not make its attempt after subscribing";
  held.unlock();
  const bool woken = got.wait_for(20s) == std::future_status::ready;
  if (!woken) b.close();  // ends the wait (it then throws closed)
  ASSERT_TRUE(woken) << "the unlock's message did not wake the waiter";
  EXPECT_TRUE(got.get());
}

// The holder's TTL is 30 s and the waiter waits 5 s: only the poll cap can
// explain it getting in once the key is deleted without a publish.
TEST(SimpleLock, AKeyDeletedWithoutPublishIsPickedUpByThePollNotTheTtl) {
  RedisServer server;
  Client raw(options_for(server));
  Client b(options_for(server));
  raw.command("SET", "quiet", "peer-token", "PX", "30000");
  SimpleLock waiter = b.simple_lock("quiet");
  const long long before = evalsha_calls(raw);
  auto got = std::async(std::launch::async, [&] {
    const auto start = std::chrono::steady_clock::now();
    const bool ok = waiter.try_lock_for(5s);
    if (ok) waiter.unlock();
    return std::pair{ok, std::chrono::steady_clock::now() - start};
  });
  ASSERT_TRUE(waiter_subscribed(raw, "quiet"));
  EXPECT_TRUE(polled(raw, before, 4)) << "the waiter does not poll a key with a 30 s TTL";
  raw.command("DEL", "quiet");
  const auto [ok, took] = got.get();
  EXPECT_TRUE(ok) << "not picked up within 5 s";
  std::cout << "picked up " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
            << " ms after the wait began (the key was deleted once it waited)\n";
}

TEST(SimpleLock, AKeyWithoutExpiryIsRecheckedAtThePollCap) {
  RedisServer server;
  Client raw(options_for(server));
  Client b(options_for(server));
  raw.command("SET", "forever", "peer-token");
  SimpleLock waiter = b.simple_lock("forever");
  EXPECT_EQ(waiter.remaining_ttl(), std::chrono::milliseconds::max());
  const long long before = evalsha_calls(raw);
  auto got = std::async(std::launch::async, [&] {
    const bool ok = waiter.try_lock_for(5s);
    if (ok) waiter.unlock();
    return ok;
  });
  ASSERT_TRUE(waiter_subscribed(raw, "forever"));
  EXPECT_TRUE(polled(raw, before, 4)) << "the waiter does not poll a key without expiry";
  raw.command("DEL", "forever");
  EXPECT_TRUE(got.get());
}

TEST(SimpleLock, FencedTokensStrictlyIncreaseAcrossClientsAndLeasesAndFenceStaleWrites) {
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  SimpleLock la = a.fenced_simple_lock("fenced");
  SimpleLock lb = b.fenced_simple_lock("fenced");
  EXPECT_TRUE(la.fenced());
  std::uint64_t last = 0;
  for (int i = 0; i < 3; ++i) {
    la.lock();
    ASSERT_TRUE(la.fencing_token().has_value());
    EXPECT_GT(*la.fencing_token(), last);
    last = *la.fencing_token();
    la.unlock();
    Lease lease = lb.acquire();
    ASSERT_TRUE(lease.fencing_token().has_value());
    EXPECT_GT(*lease.fencing_token(), last);
    last = *lease.fencing_token();
    EXPECT_TRUE(fenced_set(b, "data", "new", *lease.fencing_token()));
    EXPECT_FALSE(fenced_set(a, "data", "stale", last - 1)) << "a stale token wrote";
  }
  EXPECT_EQ(value_of(a, "data"), "new");
  EXPECT_FALSE(a.simple_lock("plain").fenced());
}

TEST(SimpleLock, LeasesAreIndependentHoldingsThatExcludeEachOtherAndRelease) {
  RedisServer server;
  Client client(options_for(server));
  SimpleLock lock = client.simple_lock("leased");
  Lease first = lock.acquire();
  EXPECT_TRUE(first.valid());
  EXPECT_FALSE(lock.try_acquire().has_value()) << "a second lease on the same handle";
  EXPECT_FALSE(lock.try_lock()) << "a thread hold while a lease holds it";
  const std::string token = value_of(client, "leased");
  auto second = lock.try_acquire_for(200ms, 5s);
  EXPECT_FALSE(second.has_value());
  std::error_code ec;
  first.release(ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(client.command("EXISTS", "leased").as_integer(), 0);
  second = lock.try_acquire_for(1s, 5s);
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(value_of(client, "leased"), token);
  EXPECT_LE(client.command("PTTL", "leased").as_integer(), 5000);
}

TEST(SimpleLock, AsyncAcquireWaitsForTheHolderAndGetsALease) {
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  SimpleLock held = a.simple_lock("async");
  held.lock();
  SimpleLock lock = b.simple_lock("async");
  auto none = lock.async_try_acquire_for(100ms, asio::use_future);
  EXPECT_FALSE(none.get().has_value());
  auto later = lock.async_acquire(asio::use_future);
  EXPECT_EQ(later.wait_for(300ms), std::future_status::timeout);
  held.unlock();
  ASSERT_EQ(later.wait_for(10s), std::future_status::ready);
  Lease lease = later.get();
  EXPECT_TRUE(lease.valid());
  lease.release();
  EXPECT_EQ(a.command("EXISTS", "async").as_integer(), 0);
}

TEST(SimpleLock, EightThreadsOnTwoClientsKeepANonAtomicCounterExact) {
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  constexpr int kThreads = 8;
  constexpr int kRounds = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Client& c = t % 2 == 0 ? a : b;
      SimpleLock lock = c.simple_lock("counter-lock");
      for (int i = 0; i < kRounds; ++i) {
        ASSERT_TRUE(lock.try_lock_for(30s));
        const Value v = c.command("GET", "counter");
        const int n = v.is_nil() ? 0 : std::stoi(v.as_string());
        c.command("SET", "counter", std::to_string(n + 1));
        lock.unlock();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(value_of(a, "counter"), std::to_string(kThreads * kRounds));
}

TEST(SimpleLock, ForceUnlockDeletesAPeersKeyWhoeverWroteIt) {
  RedisServer server;
  Client raw(options_for(server));
  Client b(options_for(server));
  raw.command("SET", "forced", "peer-token", "PX", "30000");
  SimpleLock lock = b.simple_lock("forced");
  EXPECT_TRUE(lock.is_locked());
  EXPECT_TRUE(lock.force_unlock());
  EXPECT_FALSE(lock.is_locked());
  EXPECT_FALSE(lock.force_unlock());
}

}  // namespace
}  // namespace distlock
