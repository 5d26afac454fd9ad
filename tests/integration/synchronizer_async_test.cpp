// The Latch's and the RateLimiter's async waits (issue 12), and what all
// the synchronizers' async forms share (coroutines, no thread per wait),
// against real redis-server processes. The Semaphore's: semaphore_async_test.cpp.
#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "integration/async_helpers.hpp"
#include "integration/settled_waiters.hpp"
#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::error_of;
using test::eventually;
using test::NoLatchRecheck;
using test::options_for;
using test::RedisServer;
using test::subscribers;

const std::string kLatchChannel = "redisson_countdownlatch__channel:{gate}";

// The server's TIME of the limiter's last admission, in microseconds.
long long last_admission(Client& client, const std::string& name) {
  return std::stoll(client.command("HGET", name, "ts").as_string());
}

TEST(LatchAsync, WaitCompletesOnAnOpenLatch) {
  RedisServer server;
  Client client(options_for(server));
  auto unset = client.latch("never-set").async_wait(asio::use_future);
  ASSERT_EQ(unset.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(error_of(unset));
  auto timed = client.latch("never-set").async_wait_for(0ms, asio::use_future);
  ASSERT_EQ(timed.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(timed.get());
}

TEST(LatchAsync, WaitForCompletesFalseWhileTheCountStaysAboveZero) {
  RedisServer server;
  Client client(options_for(server));
  ASSERT_TRUE(client.latch("gate").try_set_count(1));
  auto f = client.latch("gate").async_wait_for(300ms, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(f.get());
  EXPECT_EQ(client.latch("gate").count(), 1);
  EXPECT_TRUE(eventually([&] { return subscribers(client, kLatchChannel) == 0; }, 10s));
}

TEST(LatchAsync, AWaitIsWokenByAnotherClientsLastCountDown) {
  const NoLatchRecheck by_message_only;
  RedisServer server;
  Client waiter(options_for(server)), counter(options_for(server));
  ASSERT_TRUE(counter.latch("gate").try_set_count(2));
  const long long before = test::evalsha_calls(counter);
  auto plain = waiter.latch("gate").async_wait(asio::use_future);
  // The wait outlasts the bounds below: its last read, at its deadline,
  // cannot be what completes it within them.
  auto timed = waiter.latch("gate").async_wait_for(60s, asio::use_future);
  // Both joined and read the count again after joining: only the message
  // is left to open them.
  ASSERT_TRUE(test::waiters_settled(counter, kLatchChannel, 1, before, 4));
  counter.latch("gate").count_down();
  EXPECT_EQ(timed.wait_for(300ms), std::future_status::timeout) << "one count is left";
  counter.latch("gate").count_down();
  ASSERT_EQ(plain.wait_for(20s), std::future_status::ready) << "the last count_down woke nobody";
  ASSERT_EQ(timed.wait_for(20s), std::future_status::ready) << "the last count_down woke nobody";
  EXPECT_FALSE(error_of(plain));
  EXPECT_TRUE(timed.get());
}

TEST(LatchAsync, CancellingAWaitLeavesNoSubscription) {
  // Before the Client: a handler its close completes must find them alive.
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  RedisServer server;
  Client client(options_for(server));
  ASSERT_TRUE(client.latch("gate").try_set_count(1));
  client.latch("gate").async_wait(
      asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec) { done.set_value(ec); }));
  ASSERT_TRUE(eventually([&] { return subscribers(client, kLatchChannel) == 1; }, 10s));
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), asio::error::operation_aborted);
  EXPECT_TRUE(eventually([&] { return subscribers(client, kLatchChannel) == 0; }, 10s));
  EXPECT_EQ(client.latch("gate").count(), 1) << "a wait changes nothing";
}

TEST(LatchAsync, ANegativeWaitCompletesWithInvalidArgumentAndSendsNothing) {
  RedisServer server;
  Client client(options_for(server));
  const long long before = test::evalsha_calls(client);
  auto f = client.latch("gate").async_wait_for(-1ms, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(error_of(f), errc::invalid_argument);
  EXPECT_EQ(test::evalsha_calls(client), before);
}

// A wait that joins a channel another wait has confirmed already reads the
// count again once joined: a count_down between its first read and its join
// reached only the others, and without the re-read it would sleep until its
// re-check (here 10 min). Seen in CI as 300 waits making < 600 reads.
TEST(LatchAsync, AWaitJoiningAnAlreadyConfirmedChannelReadsTheCountAgain) {
  const NoLatchRecheck by_message_only;
  RedisServer server;
  Client client(options_for(server));
  ASSERT_TRUE(client.latch("gate").try_set_count(1));
  const long long before = test::evalsha_calls(client);
  client.latch("gate").async_wait([](std::error_code) {});
  // The first wait's second read comes after its subscription's confirmation.
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(client) - before >= 2; }, 30s));
  client.latch("gate").async_wait([](std::error_code) {});
  EXPECT_TRUE(eventually([&] { return test::evalsha_calls(client) - before >= 4; }, 10s))
      << "the second wait read " << test::evalsha_calls(client) - before - 2 << " time(s)";
  client.latch("gate").count_down();
}

// Hundreds of pending waits are timers and subscriptions on the Client's
// I/O thread: no thread each, and the I/O thread stays free for other work.
TEST(LatchAsync, HundredsOfPendingWaitsNeedNoThreadEachAndLeaveTheIoThreadFree) {
  const NoLatchRecheck by_message_only;
  constexpr int kWaits = 300;
  std::atomic<int> opened{0};  // before the Client, whose close completes the handlers
  std::promise<void> all;
  RedisServer server;
  // The waits' attempts are counted as the server's script calls.
  Client client(test::one_call_per_operation(options_for(server)));
  ASSERT_TRUE(client.latch("gate").try_set_count(1));
  const long threads = test::threads_now();
  const long long calls = test::evalsha_calls(client);
  for (int i = 0; i < kWaits; ++i) {
    client.latch("gate").async_wait([&](std::error_code ec) {
      if (!ec && ++opened == kWaits) all.set_value();
    });
  }
  EXPECT_EQ(client.command("PING").as_string(), "PONG") << "the I/O thread answers meanwhile";
  EXPECT_EQ(test::threads_now(), threads) << "a thread per wait";
  // Every wait has read the count twice (before and after joining the
  // channel): from now on only the message can open them.
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(client) - calls >= 2 * kWaits; }, 30s));
  EXPECT_EQ(opened.load(), 0);
  client.latch("gate").count_down();
  auto f = all.get_future();
  ASSERT_EQ(f.wait_for(60s), std::future_status::ready) << opened.load() << " of " << kWaits;
}

TEST(RateLimiterAsync, AcquireCompletesWhenAPermitIsFree) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(2, std::chrono::hours(1)));
  auto f = limiter.async_acquire(2, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(error_of(f));
  EXPECT_EQ(limiter.available_permits(), 0);
}

TEST(RateLimiterAsync, TryAcquireForCompletesFalseAtOnceWhenThePermitIsDueAfterTheWait) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(1, std::chrono::hours(1)));
  ASSERT_TRUE(limiter.try_acquire());
  const long long first = last_admission(client, "api");
  const long long calls = test::evalsha_calls(client);
  auto f = limiter.async_try_acquire_for(1, 10s, asio::use_future);
  ASSERT_EQ(f.wait_for(60s), std::future_status::ready);
  EXPECT_FALSE(f.get());
  EXPECT_EQ(test::evalsha_calls(client) - calls, 1) << "one attempt: it gave up at once";
  EXPECT_EQ(last_admission(client, "api"), first) << "nothing taken";
}

TEST(RateLimiterAsync, AWaitingAcquireCompletesWhenTheServerSaysThePermitIsDue) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(1, 1000ms));
  ASSERT_TRUE(limiter.try_acquire());
  const long long first = last_admission(client, "api");
  const long long calls = test::evalsha_calls(client);
  auto f = limiter.async_try_acquire_for(1, 20s, asio::use_future);
  ASSERT_EQ(f.wait_for(60s), std::future_status::ready);
  EXPECT_TRUE(f.get());
  EXPECT_GE(last_admission(client, "api") - first, 1'000'000) << "not before it is due";
  EXPECT_EQ(test::evalsha_calls(client) - calls, 2) << "a refusal with the wait, then admitted";
}

TEST(RateLimiterAsync, CancellingAWaitingAcquireConsumesNothing) {
  // Before the Client: a handler its close completes must find them alive.
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(1, std::chrono::hours(1)));
  ASSERT_TRUE(limiter.try_acquire());
  const Value before = client.command("HGETALL", "api");
  const long long calls = test::evalsha_calls(client);
  limiter.async_acquire(1, asio::bind_cancellation_slot(
                               signal.slot(), [&](std::error_code ec) { done.set_value(ec); }));
  // Refused once and asleep until the permit is due (an hour).
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(client) - calls == 1; }, 10s));
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), asio::error::operation_aborted);
  EXPECT_EQ(client.command("HGETALL", "api").to_string(), before.to_string());
  EXPECT_EQ(test::evalsha_calls(client) - calls, 1) << "an attempt after the cancel";
}

// docs/rate_limiter.md: a cancel completes at once with operation_aborted;
// an attempt already in flight that consumed its permits keeps them (no
// refund), and nothing more is consumed. The attempt is held in a proxy
// while the cancel happens, then let through.
TEST(RateLimiterAsync, CancelWithTheAttemptInFlightCompletesAtOnceAndTheAttemptConsumesOnce) {
  // Before the Client: a handler its close completes must find them alive.
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  RedisServer server;
  test::TcpProxy proxy(server.port());
  ClientOptions through = ClientOptions::from_uri(proxy.uri());
  // Far beyond the bound below: only the cancel can end the held attempt's
  // operation within it.
  through.command_timeout = 60s;
  Client admin(options_for(server)), client(through);
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(3, std::chrono::hours(1)));  // connected through the proxy
  const long long calls = test::evalsha_calls(admin);
  proxy.hold();
  limiter.async_acquire(1, asio::bind_cancellation_slot(
                               signal.slot(), [&](std::error_code ec) { done.set_value(ec); }));
  ASSERT_TRUE(eventually([&] { return proxy.pending_bytes() > 0; }, 10s)) << "nothing sent";
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  const bool ended = f.wait_for(10s) == std::future_status::ready;
  EXPECT_EQ(test::evalsha_calls(admin), calls) << "the attempt ran before the cancel";
  proxy.resume();
  ASSERT_TRUE(ended) << "the cancel waited for the attempt's reply";
  EXPECT_EQ(f.get(), asio::error::operation_aborted);
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(admin) - calls >= 1; }, 10s))
      << "the held attempt never ran";
  // Consumed by the attempt and kept: 2 of 3 left, not 3 (given back) nor
  // fewer (attempted again).
  EXPECT_EQ(admin.rate_limiter("api").available_permits(), 2);
  EXPECT_EQ(test::evalsha_calls(admin) - calls, 2) << "the held attempt and the read above only";
}

TEST(RateLimiterAsync, BadInputCompletesWithInvalidArgumentAndConsumesNothing) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  auto unset = limiter.async_acquire(1, asio::use_future);
  EXPECT_EQ(error_of(unset), errc::invalid_argument) << "no rate set";
  ASSERT_TRUE(limiter.try_set_rate(2, std::chrono::hours(1)));
  const Value before = client.command("HGETALL", "api");
  const long long calls = test::evalsha_calls(client);
  auto zero = limiter.async_acquire(0, asio::use_future);
  auto negative = limiter.async_try_acquire_for(-1, 1s, asio::use_future);
  auto wait = limiter.async_try_acquire_for(1, -1ms, asio::use_future);
  EXPECT_EQ(error_of(zero), errc::invalid_argument);
  EXPECT_EQ(error_of(negative), errc::invalid_argument);
  EXPECT_EQ(error_of(wait), errc::invalid_argument);
  EXPECT_EQ(test::evalsha_calls(client), calls) << "sent although the input was bad";
  auto over = limiter.async_acquire(3, asio::use_future);
  EXPECT_EQ(error_of(over), errc::invalid_argument) << "n above the rate, from the server";
  EXPECT_EQ(client.command("HGETALL", "api").to_string(), before.to_string());
}

// One coroutine awaits each synchronizer's async form in turn, on the
// Client's executor.
TEST(SynchronizerAsync, ACoroutineAwaitsTheSemaphoreTheLatchAndTheRateLimiter) {
  RedisServer server;
  Client client(options_for(server));
  ASSERT_TRUE(client.semaphore("s").try_set_permits(1));
  ASSERT_TRUE(client.rate_limiter("api").try_set_rate(1, std::chrono::hours(1)));
  ASSERT_TRUE(client.latch("gate").try_set_count(1));
  auto f = asio::co_spawn(
      get_executor(client),
      [&]() -> asio::awaitable<int> {
        Semaphore sem = client.semaphore("s");
        co_await sem.async_acquire(1, asio::use_awaitable);
        Permit none =
            (co_await sem.async_try_acquire_permit(1, 0ms, asio::use_awaitable)).value_or(Permit());
        co_await client.rate_limiter("api").async_acquire(1, asio::use_awaitable);
        const bool open = co_await client.latch("gate").async_wait_for(0ms, asio::use_awaitable);
        co_return sem.held_permits() * 100 + (none.valid() ? 10 : 0) + (open ? 1 : 0);
      },
      asio::use_future);
  ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(f.get(), 100) << "1 permit held, no second one, the latch still closed";
}

}  // namespace
}  // namespace distlock
