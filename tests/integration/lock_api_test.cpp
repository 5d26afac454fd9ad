// The std::error_code& twins of Lock's blocking calls and the waits of any
// duration, against real redis-server processes (issue 10, item 7).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::options_for;
using test::RedisServer;
using test::RedisServerOptions;

// A server with the ACL user "limited" (password "pw"), which may not run
// scripts, EXISTS or PTTL: those calls get a NOPERM error reply.
RedisServer limited_server() {
  RedisServerOptions o;
  o.acl_users = {"limited on >pw ~* &* +@all -@scripting -exists -pttl"};
  return RedisServer(std::move(o));
}

ClientOptions limited_options(const RedisServer& server) {
  ClientOptions o = options_for(server);
  o.username = "limited";
  o.password = "pw";
  return o;
}

// An error_code that a call must clear (or overwrite) to pass.
std::error_code stale() {
  return make_error_code(errc::timeout);
}

// Runs `f` on another thread and returns its result.
template <class F>
auto on_other_thread(F f) {
  return std::async(std::launch::async, std::move(f)).get();
}

// --- lock(lease, ec) ----------------------------------------------------------

TEST(LockApi, LockWithLeaseAndErrorCodeHoldsWithThatFixedLeaseAndClearsEc) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("fixed");
  std::error_code ec = stale();
  lock.lock(2s, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(lock.is_held_by_current_thread());
  const auto ttl = client.command("PTTL", "fixed").as_integer();
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 2000) << "the fixed lease, not the 30 s watchdog lease";
  lock.unlock();
}

TEST(LockApi, LockWithANonPositiveLeaseAndErrorCodeSetsInvalidArgumentAndSendsNothing) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("bad-lease");
  std::error_code ec;
  lock.lock(0ms, ec);
  EXPECT_EQ(ec, errc::invalid_argument);
  EXPECT_EQ(client.command("EXISTS", "bad-lease").as_integer(), 0);
}

TEST(LockApi, LockWithLeaseAndErrorCodeAfterCloseSetsClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  lock.lock(1s, ec);
  EXPECT_EQ(ec, errc::closed);
}

// --- try_lock(ec) -------------------------------------------------------------

TEST(LockApi, TryLockWithErrorCodeTakesAFreeLockAndClearsEc) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("free");
  std::error_code ec = stale();
  EXPECT_TRUE(lock.try_lock(ec));
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(lock.hold_count(), 1u);
  lock.unlock();
}

TEST(LockApi, TryLockWithErrorCodeReturnsFalseWithEcClearWhenAnotherClientHoldsIt) {
  RedisServer server;
  Client holder(options_for(server));
  Client other(options_for(server));
  holder.lock("held").lock();
  std::error_code ec = stale();
  EXPECT_FALSE(other.lock("held").try_lock(ec));
  EXPECT_FALSE(ec) << "contention is not an error: " << ec.message();
  holder.lock("held").unlock();
}

TEST(LockApi, TryLockWithErrorCodeOnAKeyOfAnotherTypeSetsServerError) {
  RedisServer server;
  Client client(options_for(server));
  client.command("SET", "a-string", "x");
  std::error_code ec;
  EXPECT_FALSE(client.lock("a-string").try_lock(ec));
  EXPECT_EQ(ec, errc::server_error);
}

TEST(LockApi, TryLockWithErrorCodeAfterCloseSetsClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  EXPECT_FALSE(lock.try_lock(ec));
  EXPECT_EQ(ec, errc::closed);
}

// --- try_lock_for(wait, ec) and try_lock_until(deadline, ec) ------------------

TEST(LockApi, TryLockForWithErrorCodeReturnsFalseWithEcClearNoEarlierThanTheWait) {
  RedisServer server;
  Client holder(options_for(server));
  Client other(options_for(server));
  holder.lock("held").lock();
  std::error_code ec = stale();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(other.lock("held").try_lock_for(200ms, ec));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  EXPECT_FALSE(ec) << ec.message();
  holder.lock("held").unlock();
}

TEST(LockApi, TryLockForWithANegativeWaitAndErrorCodeSetsInvalidArgument) {
  RedisServer server;
  Client client(options_for(server));
  std::error_code ec;
  EXPECT_FALSE(client.lock("bad-wait").try_lock_for(-1s, ec));
  EXPECT_EQ(ec, errc::invalid_argument);
}

TEST(LockApi, TryLockUntilWithErrorCodeTakesAFreeLockBeforeTheDeadline) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("until");
  std::error_code ec = stale();
  EXPECT_TRUE(lock.try_lock_until(std::chrono::system_clock::now() + 5s, ec));
  EXPECT_FALSE(ec) << ec.message();
  lock.unlock();
}

TEST(LockApi, TryLockUntilAPassedDeadlineWithErrorCodeMakesOneAttemptAndReportsNoError) {
  RedisServer server;
  Client holder(options_for(server));
  Client other(options_for(server));
  holder.lock("held").lock();
  std::error_code ec = stale();
  EXPECT_FALSE(other.lock("held").try_lock_until(std::chrono::steady_clock::now() - 1s, ec));
  EXPECT_FALSE(ec) << "a passed deadline is not a negative wait: " << ec.message();
  holder.lock("held").unlock();
}

TEST(LockApi, TryLockUntilWithErrorCodeAfterCloseSetsClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  EXPECT_FALSE(lock.try_lock_until(std::chrono::steady_clock::now() + 1s, ec));
  EXPECT_EQ(ec, errc::closed);
}

// --- force_unlock(ec) ---------------------------------------------------------

TEST(LockApi, ForceUnlockWithErrorCodeDeletesAnotherClientsLockAndReturnsTrue) {
  RedisServer server;
  Client holder(options_for(server));
  Client other(options_for(server));
  holder.lock("forced").lock();
  std::error_code ec = stale();
  EXPECT_TRUE(other.lock("forced").force_unlock(ec));
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(other.command("EXISTS", "forced").as_integer(), 0);
}

TEST(LockApi, ForceUnlockWithErrorCodeOfAFreeLockReturnsFalseWithEcClear) {
  RedisServer server;
  Client client(options_for(server));
  std::error_code ec = stale();
  EXPECT_FALSE(client.lock("free").force_unlock(ec));
  EXPECT_FALSE(ec) << ec.message();
}

TEST(LockApi, ForceUnlockWithErrorCodeRefusedByTheServerSetsServerError) {
  RedisServer server = limited_server();
  Client client(limited_options(server));
  std::error_code ec;
  EXPECT_FALSE(client.lock("forced").force_unlock(ec));
  EXPECT_EQ(ec, errc::server_error) << "NOPERM for scripts";
}

TEST(LockApi, ForceUnlockWithErrorCodeAfterCloseSetsClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  EXPECT_FALSE(lock.force_unlock(ec));
  EXPECT_EQ(ec, errc::closed);
}

// --- Queries ------------------------------------------------------------------

TEST(LockApi, IsLockedWithErrorCodeSeesAnotherClientsLock) {
  RedisServer server;
  Client holder(options_for(server));
  Client other(options_for(server));
  Lock lock = other.lock("seen");
  std::error_code ec = stale();
  EXPECT_FALSE(lock.is_locked(ec));
  EXPECT_FALSE(ec) << ec.message();
  holder.lock("seen").lock();
  ec = stale();
  EXPECT_TRUE(lock.is_locked(ec));
  EXPECT_FALSE(ec) << ec.message();
  holder.lock("seen").unlock();
}

TEST(LockApi, IsLockedWithErrorCodeRefusedByTheServerSetsServerError) {
  RedisServer server = limited_server();
  Client client(limited_options(server));
  std::error_code ec;
  EXPECT_FALSE(client.lock("x").is_locked(ec));
  EXPECT_EQ(ec, errc::server_error) << "NOPERM for EXISTS";
}

TEST(LockApi, IsLockedWithErrorCodeAfterCloseSetsClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  EXPECT_FALSE(lock.is_locked(ec));
  EXPECT_EQ(ec, errc::closed);
}

TEST(LockApi, IsHeldByCurrentThreadWithErrorCodeIsTrueOnlyOnTheHoldingThread) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("mine");
  lock.lock();
  std::error_code ec = stale();
  EXPECT_TRUE(lock.is_held_by_current_thread(ec));
  EXPECT_FALSE(ec) << ec.message();
  const auto [held, other_ec] = on_other_thread([&] {
    std::error_code e = stale();
    const bool h = lock.is_held_by_current_thread(e);
    return std::pair(h, e);
  });
  EXPECT_FALSE(held);
  EXPECT_FALSE(other_ec) << other_ec.message();
  lock.unlock();
}

TEST(LockApi, IsHeldByCurrentThreadWithErrorCodeOnAKeyOfAnotherTypeSetsServerError) {
  RedisServer server;
  Client client(options_for(server));
  client.command("SET", "a-string", "x");
  std::error_code ec;
  EXPECT_FALSE(client.lock("a-string").is_held_by_current_thread(ec));
  EXPECT_EQ(ec, errc::server_error);
}

TEST(LockApi, IsHeldByCurrentThreadWithErrorCodeAfterCloseSetsClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  EXPECT_FALSE(lock.is_held_by_current_thread(ec));
  EXPECT_EQ(ec, errc::closed);
}

TEST(LockApi, HoldCountWithErrorCodeCountsReentries) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("count");
  std::error_code ec = stale();
  EXPECT_EQ(lock.hold_count(ec), 0u);
  EXPECT_FALSE(ec) << ec.message();
  lock.lock();
  lock.lock();
  ec = stale();
  EXPECT_EQ(lock.hold_count(ec), 2u);
  EXPECT_FALSE(ec) << ec.message();
  lock.unlock();
  lock.unlock();
}

TEST(LockApi, HoldCountWithErrorCodeOnAKeyOfAnotherTypeSetsServerError) {
  RedisServer server;
  Client client(options_for(server));
  client.command("SET", "a-string", "x");
  std::error_code ec;
  EXPECT_EQ(client.lock("a-string").hold_count(ec), 0u);
  EXPECT_EQ(ec, errc::server_error);
}

TEST(LockApi, HoldCountOfAFieldThatIsNotANumberIsAProtocolErrorInBothForms) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("garbled");
  lock.lock();
  const std::string owner = client.command("HKEYS", "garbled").as_array()[0].as_string();
  client.command("HSET", "garbled", owner, "many");
  std::error_code ec;
  EXPECT_EQ(lock.hold_count(ec), 0u);
  EXPECT_EQ(ec, errc::protocol_error);
  try {
    lock.hold_count();
    FAIL() << "a garbled count must throw distlock::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::protocol_error);
  }
  client.command("DEL", "garbled");
}

TEST(LockApi, HoldCountWithErrorCodeAfterCloseSetsClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  EXPECT_EQ(lock.hold_count(ec), 0u);
  EXPECT_EQ(ec, errc::closed);
}

TEST(LockApi, RemainingTtlWithErrorCodeIsNulloptForAFreeLockAndTheTtlForAHeldOne) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("ttl");
  std::error_code ec = stale();
  EXPECT_EQ(lock.remaining_ttl(ec), std::nullopt);
  EXPECT_FALSE(ec) << ec.message();
  lock.lock(5s);
  ec = stale();
  const auto ttl = lock.remaining_ttl(ec);
  EXPECT_FALSE(ec) << ec.message();
  ASSERT_TRUE(ttl.has_value());
  EXPECT_GT(*ttl, 0ms);
  EXPECT_LE(*ttl, 5s);
  lock.unlock();
}

TEST(LockApi, RemainingTtlWithErrorCodeRefusedByTheServerSetsServerError) {
  RedisServer server = limited_server();
  Client client(limited_options(server));
  std::error_code ec;
  EXPECT_EQ(client.lock("x").remaining_ttl(ec), std::nullopt);
  EXPECT_EQ(ec, errc::server_error) << "NOPERM for PTTL";
}

TEST(LockApi, RemainingTtlWithErrorCodeAfterCloseSetsClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  EXPECT_EQ(lock.remaining_ttl(ec), std::nullopt);
  EXPECT_EQ(ec, errc::closed);
}

// --- acquire(ec) and try_acquire(ec) --------------------------------------------

TEST(LockApi, AcquireWithErrorCodeReturnsAValidLeaseAndClearsEc) {
  RedisServer server;
  Client client(options_for(server));
  std::error_code ec = stale();
  Lease lease = client.lock("lease").acquire(ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_TRUE(lease.valid());
  EXPECT_EQ(client.command("EXISTS", "lease").as_integer(), 1);
}

TEST(LockApi, AcquireWithErrorCodeOnAKeyOfAnotherTypeReturnsAnEmptyLeaseWithServerError) {
  RedisServer server;
  Client client(options_for(server));
  client.command("SET", "a-string", "x");
  std::error_code ec;
  Lease lease = client.lock("a-string").acquire(ec);
  EXPECT_EQ(ec, errc::server_error);
  EXPECT_FALSE(lease.valid());
}

TEST(LockApi, AcquireWithErrorCodeAfterCloseReturnsAnEmptyLeaseWithClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  Lease lease = lock.acquire(ec);
  EXPECT_EQ(ec, errc::closed);
  EXPECT_FALSE(lease.valid());
}

TEST(LockApi, TryAcquireWithErrorCodeTakesAFreeLockAndClearsEc) {
  RedisServer server;
  Client client(options_for(server));
  std::error_code ec = stale();
  std::optional<Lease> lease = client.lock("free").try_acquire(ec);
  EXPECT_FALSE(ec) << ec.message();
  ASSERT_TRUE(lease.has_value());
  EXPECT_TRUE(lease->valid());
}

TEST(LockApi, TryAcquireWithErrorCodeReturnsNulloptWithEcClearWhenHeld) {
  RedisServer server;
  Client client(options_for(server));
  Lease held = client.lock("held").acquire();
  std::error_code ec = stale();
  EXPECT_EQ(client.lock("held").try_acquire(ec), std::nullopt);
  EXPECT_FALSE(ec) << "contention is not an error: " << ec.message();
}

TEST(LockApi, TryAcquireWithErrorCodeOnAKeyOfAnotherTypeSetsServerError) {
  RedisServer server;
  Client client(options_for(server));
  client.command("SET", "a-string", "x");
  std::error_code ec;
  EXPECT_EQ(client.lock("a-string").try_acquire(ec), std::nullopt);
  EXPECT_EQ(ec, errc::server_error);
}

TEST(LockApi, TryAcquireWithErrorCodeAfterCloseSetsClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  std::error_code ec;
  EXPECT_EQ(lock.try_acquire(ec), std::nullopt);
  EXPECT_EQ(ec, errc::closed);
}

// --- Waits of any duration --------------------------------------------------------

TEST(LockApi, TryAcquireForAOneMicrosecondWaitWaitsAWholeMillisecondNotZero) {
  RedisServer server;
  Client client(options_for(server));
  Lease held = client.lock("held").acquire();
  Lock lock = client.lock("held");
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(lock.try_acquire_for(1us), std::nullopt);
    EXPECT_GE(std::chrono::steady_clock::now() - start, 1ms)
        << "1 us is rounded up to 1 ms, never down to a zero wait";
  }
}

TEST(LockApi, TryAcquireForWithErrorCodeAndASubMillisecondWaitWaitsAWholeMillisecond) {
  RedisServer server;
  Client client(options_for(server));
  Lease held = client.lock("held").acquire();
  Lock lock = client.lock("held");
  for (int i = 0; i < 5; ++i) {
    std::error_code ec = stale();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(lock.try_acquire_for(std::chrono::microseconds(300), ec), std::nullopt);
    EXPECT_GE(std::chrono::steady_clock::now() - start, 1ms);
    EXPECT_FALSE(ec) << ec.message();
  }
}

TEST(LockApi, TryAcquireForInMicrosecondsGetsALockReleasedWithinTheWait) {
  RedisServer server;
  Client holder(options_for(server));
  Client waiter(options_for(server));
  Lease held = holder.lock("handoff").acquire();
  auto release = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(100ms);
    held.release();
  });
  auto lease = waiter.lock("handoff").try_acquire_for(std::chrono::microseconds(10'000'000));
  ASSERT_TRUE(lease.has_value()) << "10,000,000 us is 10 s";
  EXPECT_TRUE(lease->valid());
  release.get();
}

TEST(LockApi, TryAcquireForInSecondsWithAFixedLeaseInSecondsHoldsForThatLease) {
  RedisServer server;
  Client client(options_for(server));
  auto lease = client.lock("fixed").try_acquire_for(std::chrono::duration<double>(0.5), 3s);
  ASSERT_TRUE(lease.has_value());
  const auto ttl = client.command("PTTL", "fixed").as_integer();
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 3000);
}

TEST(LockApi, TryAcquireForWithANegativeSubMillisecondWaitIsInvalidArgumentInBothForms) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("bad-wait");
  std::error_code ec;
  EXPECT_EQ(lock.try_acquire_for(-1us, ec), std::nullopt);
  EXPECT_EQ(ec, errc::invalid_argument) << "a negative wait must not round to a zero wait";
  try {
    lock.try_acquire_for(-1us);
    FAIL() << "-1 us must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
  }
  EXPECT_EQ(client.command("EXISTS", "bad-wait").as_integer(), 0);
}

TEST(LockApi, TryLockForInMicrosecondsWithAFixedLeaseHoldsForThatLease) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("fixed");
  ASSERT_TRUE(lock.try_lock_for(std::chrono::microseconds(500), 3s));
  const auto ttl = client.command("PTTL", "fixed").as_integer();
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 3000) << "the fixed lease, not the watchdog's";
  lock.unlock();
}

}  // namespace
}  // namespace distlock
