// Semaphore's and Permit's async acquires (issue 12) against real
// redis-server processes: completion, deadline, wake-ups, cancellation
// (checked on the server), bad input.
#include <gtest/gtest.h>

#include <algorithm>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/use_future.hpp>
#include <chrono>
#include <future>
#include <optional>
#include <string>

#include "integration/async_helpers.hpp"
#include "integration/settled_waiters.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::error_of;
using test::eventually;
using test::options_for;
using test::RedisServer;
using test::renewals;
using test::subscribers;

// Leases so long that a waiter's fallback retry (a third of its lease) and
// the retry at the earliest lease end both lie beyond every bound here: a
// waiter seen woken was woken by a message.
constexpr auto kLongLease = std::chrono::minutes(10);

std::string channel(const std::string& name) {
  return "redisson_sc:{" + name + "}";
}
// Holders with a lease (docs/semaphore.md, Layout).
long long leases(Client& c, const std::string& name) {
  return c.command("ZCARD", "distlock_sem_holders:{" + name + "}").as_integer();
}
// Those that hold permits: not the ones whose count went to 0.
long long holders(Client& c, const std::string& name) {
  const Value counts = c.command("HVALS", "distlock_sem_counts:{" + name + "}");
  const auto zero =
      std::ranges::count_if(counts.as_array(), [](const Value& v) { return v.as_string() == "0"; });
  return leases(c, name) - zero;
}
long long available(Client& c, const std::string& name) {
  return std::stoll(c.command("GET", name).as_string());
}

TEST(SemaphoreAsync, AcquireCompletesWithThePermitsHeldByTheClient) {
  RedisServer server;
  Client client(options_for(server));
  Semaphore sem = client.semaphore("s");
  ASSERT_TRUE(sem.try_set_permits(5));
  auto f = sem.async_acquire(2, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(error_of(f));
  EXPECT_EQ(sem.held_permits(), 2);
  EXPECT_EQ(available(client, "s"), 3);
  sem.release(2) /* any thread of the Client may release them */;
  EXPECT_EQ(available(client, "s"), 5);
  EXPECT_EQ(holders(client, "s"), 0);
}

TEST(SemaphoreAsync, TryAcquireForCompletesFalseAtItsDeadlineTakingNothing) {
  RedisServer server;
  Client holder(options_for(server)), waiter(options_for(server));
  ASSERT_TRUE(holder.semaphore("s").try_set_permits(1));
  holder.semaphore("s").acquire(1);
  auto f = waiter.semaphore("s").async_try_acquire_for(1, 300ms, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(f.get());
  EXPECT_EQ(waiter.semaphore("s").held_permits(), 0);
  EXPECT_EQ(holders(holder, "s"), 1) << "only the holder's";
  EXPECT_EQ(renewals(waiter), 0u);
  EXPECT_TRUE(eventually([&] { return subscribers(holder, channel("s")) == 0; }, 10s));
}

TEST(SemaphoreAsync, AWaitingAcquireWakesOnAnotherClientsRelease) {
  RedisServer server;
  Client holder(options_for(server, kLongLease)), waiter(options_for(server, kLongLease));
  Semaphore held = holder.semaphore("s");
  ASSERT_TRUE(held.try_set_permits(2));
  held.acquire(2);
  const long long before = test::evalsha_calls(holder);
  // The wait outlasts every bound below: its last attempt, at its deadline,
  // cannot be what completes it within them.
  auto f = waiter.semaphore("s").async_try_acquire_for(2, 60s, asio::use_future);
  ASSERT_TRUE(test::waiters_settled(holder, channel("s"), 1, before, 2));
  const long long settled = test::evalsha_calls(holder);
  held.release(1);
  // The release's script, then the attempt its message woke: 1 < 2.
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(holder) - settled >= 2; }, 20s))
      << "the release woke nobody";
  EXPECT_EQ(available(holder, "s"), 1) << "2 are wanted, 1 is free";
  EXPECT_EQ(f.wait_for(0ms), std::future_status::timeout);
  held.release(1);
  ASSERT_EQ(f.wait_for(20s), std::future_status::ready) << "the second release woke nobody";
  EXPECT_TRUE(f.get());
  EXPECT_EQ(waiter.semaphore("s").held_permits(), 2);
}

TEST(SemaphoreAsync, AWaitingAcquireWakesOnAddPermits) {
  RedisServer server;
  Client admin(options_for(server, kLongLease)), waiter(options_for(server, kLongLease));
  ASSERT_TRUE(admin.semaphore("s").try_set_permits(0));
  const long long before = test::evalsha_calls(admin);
  auto f = waiter.semaphore("s").async_acquire(1, asio::use_future);
  ASSERT_TRUE(test::waiters_settled(admin, channel("s"), 1, before, 2));
  admin.semaphore("s").add_permits(1);
  ASSERT_EQ(f.wait_for(20s), std::future_status::ready) << "add_permits woke nobody";
  EXPECT_FALSE(error_of(f));
  EXPECT_EQ(waiter.semaphore("s").held_permits(), 1);
}

TEST(SemaphoreAsync, CancellingAWaitingAcquireLeavesNothingHeldOrSubscribed) {
  // Before the Client: a handler its close completes must find them alive.
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  RedisServer server;
  Client holder(options_for(server)), waiter(options_for(server));
  Semaphore held = holder.semaphore("s");
  ASSERT_TRUE(held.try_set_permits(1));
  held.acquire(1);
  waiter.semaphore("s").async_acquire(
      1,
      asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec) { done.set_value(ec); }));
  ASSERT_TRUE(eventually([&] { return subscribers(holder, channel("s")) == 1; }, 10s));
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), asio::error::operation_aborted);
  EXPECT_TRUE(eventually([&] { return subscribers(holder, channel("s")) == 0; }, 10s));
  EXPECT_EQ(renewals(waiter), 0u);
  // The release publishes to nobody; the cancelled waiter takes nothing.
  held.release(1);
  EXPECT_EQ(available(holder, "s"), 1);
  EXPECT_EQ(holders(holder, "s"), 0);
  EXPECT_EQ(leases(holder, "s"), 0);
  EXPECT_EQ(waiter.semaphore("s").held_permits(), 0);
}

// Cancels an acquire of `n` that the paused server has not run yet: it runs
// (and takes the permits) only after the cancel has completed the handler.
// `signal` and `done` outlive the Client, whose close completes the handler.
std::error_code cancel_in_flight(RedisServer& server,
                                 Semaphore sem,
                                 std::int64_t n,
                                 asio::cancellation_signal& signal,
                                 std::promise<std::error_code>& done) {
  server.pause();
  sem.async_acquire(n, asio::bind_cancellation_slot(
                           signal.slot(), [&](std::error_code ec) { done.set_value(ec); }));
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  const bool ended = f.wait_for(10s) == std::future_status::ready;
  server.resume();
  return ended ? f.get() : std::make_error_code(std::errc::timed_out);
}

TEST(SemaphoreAsync, CancelWhileTheAttemptIsInFlightGivesBackWhatItTook) {
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  RedisServer server;
  Client admin(options_for(server)), client(options_for(server));
  ASSERT_TRUE(admin.semaphore("s").try_set_permits(5));
  EXPECT_EQ(cancel_in_flight(server, client.semaphore("s"), 2, signal, done),
            asio::error::operation_aborted);
  // Given back at once, not when the holder's lease (30 s) ends.
  EXPECT_TRUE(
      eventually([&] { return available(admin, "s") == 5 && holders(admin, "s") == 0; }, 10s))
      << "available " << available(admin, "s") << ", holders " << holders(admin, "s");
  EXPECT_EQ(leases(admin, "s"), 0);
  EXPECT_EQ(client.semaphore("s").held_permits(), 0);
  EXPECT_EQ(renewals(client), 0u);
}

TEST(SemaphoreAsync, CancelWhileTheAttemptIsInFlightKeepsTheClientsOtherPermits) {
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  RedisServer server;
  Client admin(options_for(server)), client(options_for(server));
  Semaphore sem = client.semaphore("s");
  ASSERT_TRUE(admin.semaphore("s").try_set_permits(5));
  sem.acquire(1);
  EXPECT_EQ(cancel_in_flight(server, sem, 2, signal, done), asio::error::operation_aborted);
  EXPECT_TRUE(eventually([&] { return available(admin, "s") == 4; }, 10s))
      << "the cancelled 2 were not given back: available " << available(admin, "s");
  EXPECT_EQ(holders(admin, "s"), 1);
  EXPECT_EQ(sem.held_permits(), 1);
  sem.release(1);
  EXPECT_EQ(available(admin, "s"), 5);
  EXPECT_EQ(holders(admin, "s"), 0);
}

TEST(SemaphoreAsync, BadInputCompletesWithInvalidArgumentAndSendsNothing) {
  RedisServer server;
  Client client(options_for(server));
  Semaphore sem = client.semaphore("s");
  ASSERT_TRUE(sem.try_set_permits(5));
  const long long before = test::evalsha_calls(client);
  auto a = sem.async_acquire(0, asio::use_future);
  auto b = sem.async_acquire(-1, asio::use_future);
  auto c = sem.async_try_acquire_for(0, 1s, asio::use_future);
  auto d = sem.async_try_acquire_for(1, -1ms, asio::use_future);
  auto e = sem.async_acquire_permit(0, asio::use_future);
  auto g = sem.async_acquire_permit(1, 0ms, asio::use_future);
  auto h = sem.async_try_acquire_permit(1, -1ms, asio::use_future);
  EXPECT_EQ(error_of(a), errc::invalid_argument);
  EXPECT_EQ(error_of(b), errc::invalid_argument);
  EXPECT_EQ(error_of(c), errc::invalid_argument);
  EXPECT_EQ(error_of(d), errc::invalid_argument);
  EXPECT_EQ(error_of(e), errc::invalid_argument);
  EXPECT_EQ(error_of(g), errc::invalid_argument);
  EXPECT_EQ(error_of(h), errc::invalid_argument);
  EXPECT_EQ(test::evalsha_calls(client), before) << "an attempt was sent";
  EXPECT_EQ(available(client, "s"), 5);
  EXPECT_EQ(sem.held_permits(), 0);
  EXPECT_EQ(renewals(client), 0u);
}

TEST(PermitAsync, AcquirePermitCompletesWithAValidPermitThatGivesBackOnDestruction) {
  RedisServer server;
  Client client(options_for(server));
  Semaphore sem = client.semaphore("s");
  ASSERT_TRUE(sem.try_set_permits(3));
  {
    auto f = sem.async_acquire_permit(2, 60s, asio::use_future);
    ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
    Permit p = f.get();
    EXPECT_TRUE(p.valid());
    EXPECT_EQ(p.permits(), 2);
    EXPECT_EQ(available(client, "s"), 1);
    EXPECT_EQ(sem.held_permits(), 0) << "a Permit's are its own, not the Client's";
  }
  EXPECT_EQ(available(client, "s"), 3);
  EXPECT_EQ(holders(client, "s"), 0);
  EXPECT_EQ(renewals(client), 0u);
}

TEST(PermitAsync, TryAcquirePermitCompletesEmptyAtItsDeadlineTakingNothing) {
  RedisServer server;
  Client client(options_for(server));
  Semaphore sem = client.semaphore("s");
  ASSERT_TRUE(sem.try_set_permits(1));
  Permit first = sem.acquire_permit(1);
  auto f = sem.async_try_acquire_permit(1, 300ms, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(f.get().has_value());
  EXPECT_EQ(holders(client, "s"), 1) << "only the first Permit's";
  EXPECT_EQ(renewals(client), 1u) << "only the first Permit is renewed";
}

TEST(PermitAsync, AWaitingAcquirePermitWakesOnARelease) {
  RedisServer server;
  Client client(options_for(server, kLongLease));
  Semaphore sem = client.semaphore("s");
  ASSERT_TRUE(sem.try_set_permits(1));
  Permit first = sem.acquire_permit(1);
  const long long before = test::evalsha_calls(client);
  // The wait outlasts the bound below (its last attempt cannot rescue it).
  auto f = sem.async_try_acquire_permit(1, 60s, asio::use_future);
  ASSERT_TRUE(test::waiters_settled(client, channel("s"), 1, before, 2));
  first.release();
  ASSERT_EQ(f.wait_for(20s), std::future_status::ready) << "the release woke nobody";
  std::optional<Permit> second = f.get();
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->valid());
}

TEST(PermitAsync, CancelWhileTheAttemptIsInFlightGivesBackWhatItTook) {
  // Before the Client: a handler its close completes must find them alive.
  asio::cancellation_signal signal;
  std::promise<bool> done;
  RedisServer server;
  Client admin(options_for(server)), client(options_for(server));
  ASSERT_TRUE(admin.semaphore("s").try_set_permits(3));
  server.pause();
  client.semaphore("s").async_acquire_permit(
      2, asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, Permit p) {
        done.set_value(ec == asio::error::operation_aborted && !p.valid());
      }));
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  const bool ended = f.wait_for(10s) == std::future_status::ready;
  server.resume();
  ASSERT_TRUE(ended) << "cancel waited for the server";
  EXPECT_TRUE(f.get()) << "not aborted with an empty Permit";
  EXPECT_TRUE(
      eventually([&] { return available(admin, "s") == 3 && holders(admin, "s") == 0; }, 10s));
  EXPECT_EQ(leases(admin, "s"), 0);
  EXPECT_EQ(renewals(client), 0u);
}

}  // namespace
}  // namespace distlock
