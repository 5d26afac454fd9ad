// Asynchronous acquire and release: cancellation through the handler's
// slot, the waiting deadline, and a program that runs on coroutines.
#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <chrono>
#include <future>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

#include "client_impl.hpp"
#include "distlock/distlock.hpp"
#include "distlock/lock_async.hpp"
#include "support/app_thread.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

long long subscribers(Client& client, const std::string& channel) {
  return client.command("PUBSUB", "NUMSUB", channel).as_array()[1].as_integer();
}

long long evalsha_calls(Client& client) {
  const std::string stats = client.command("INFO", "commandstats").as_string();
  const std::string field = "cmdstat_evalsha:calls=";
  const auto at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

using test::AppThread;

struct Outcome {
  std::error_code ec;
  bool valid = false;
};

TEST(LockAsync, AcquireCancelledThroughItsSlotEndsAbortedLeavingNoSubscriptionRenewalOrKey) {
  RedisServer server;
  Client holder(options_for(server));
  Client waiter(options_for(server));
  const std::string channel = "redisson_lock__channel:{cancelled}";
  Lock held = holder.lock("cancelled");
  held.lock();

  AppThread app;
  asio::cancellation_signal signal;
  std::promise<Outcome> done;
  waiter.lock("cancelled")
      .async_acquire(asio::bind_cancellation_slot(
          signal.slot(), asio::bind_executor(app.io(), [&](std::error_code ec, Lease lease) {
            done.set_value({ec, lease.valid()});
          })));
  // The waiter is waiting (subscribed), not between attempts.
  ASSERT_TRUE(eventually([&] { return subscribers(holder, channel) > 0; }, 10s));
  asio::post(app.io(), [&] { signal.emit(asio::cancellation_type::terminal); });

  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "the cancelled wait never ended";
  const Outcome o = f.get();
  EXPECT_EQ(o.ec, asio::error::operation_aborted) << o.ec.message();
  EXPECT_FALSE(o.valid);
  EXPECT_EQ(distlock::detail::Access::impl(waiter)->watchdog().size(), 0u)
      << "a renewal is still scheduled";
  EXPECT_TRUE(eventually([&] { return subscribers(holder, channel) == 0; }, 10s))
      << "the cancelled waiter's subscription was left behind";
  // The unlock publishes to nobody; the cancelled waiter does not take it.
  held.unlock();
  EXPECT_EQ(holder.command("EXISTS", "cancelled").as_integer(), 0);
  EXPECT_EQ(distlock::detail::Access::impl(waiter)->watchdog().size(), 0u);
}

TEST(LockAsync, CancelWhileTheAttemptIsInFlightGivesBackWhatItAcquired) {
  RedisServer server;
  Client admin(options_for(server));
  Client waiter(options_for(server));
  const long long before = evalsha_calls(admin);
  Lock lock = waiter.lock("in-flight");

  asio::cancellation_signal signal;
  std::promise<Outcome> done;
  server.pause();
  // The lock is free: the attempt acquires, but only once the server runs.
  lock.async_acquire(
      asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, Lease lease) {
        done.set_value({ec, lease.valid()});
      }));
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "cancel waited for the server";
  server.resume();
  const Outcome o = f.get();
  EXPECT_EQ(o.ec, asio::error::operation_aborted) << o.ec.message();
  EXPECT_FALSE(o.valid);
  // The attempt ran after the cancel (the acquire and the undo: two calls),
  // and what it took was given back at once, not at its lease's end.
  ASSERT_TRUE(eventually([&] { return evalsha_calls(admin) >= before + 2; }, 10s));
  EXPECT_TRUE(
      eventually([&] { return admin.command("EXISTS", "in-flight").as_integer() == 0; }, 10s))
      << "the cancelled acquire's hold was left on the server, PTTL "
      << admin.command("PTTL", "in-flight").to_string();
  EXPECT_EQ(distlock::detail::Access::impl(waiter)->watchdog().size(), 0u)
      << "a renewal is still scheduled";
}

TEST(LockAsync, TryAcquireForEndsEmptyAtItsDeadlineWithNoError) {
  RedisServer server;
  Client holder(options_for(server));
  Client waiter(options_for(server));
  holder.lock("deadline").lock();
  auto f = waiter.lock("deadline").async_try_acquire_for(300ms, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  std::optional<Lease> lease = f.get();  // no error: it throws on one
  EXPECT_FALSE(lease.has_value());
  EXPECT_EQ(distlock::detail::Access::impl(waiter)->watchdog().size(), 0u)
      << "a renewal is still scheduled";
  EXPECT_TRUE(eventually(
      [&] { return subscribers(holder, "redisson_lock__channel:{deadline}") == 0; }, 10s));
  holder.lock("deadline").unlock();

  auto g = waiter.lock("deadline").async_try_acquire_for(10s, asio::use_future);
  ASSERT_EQ(g.wait_for(10s), std::future_status::ready);
  std::optional<Lease> got = g.get();
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->valid());
}

TEST(LockAsync, TryAcquireForANegativeWaitFailsWithInvalidArgumentAndSendsNothing) {
  RedisServer server;
  Client client(options_for(server));
  Client admin(server.uri());
  const long long before = evalsha_calls(admin);
  auto f = client.lock("negative").async_try_acquire_for(-1ms, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  try {
    f.get();
    ADD_FAILURE() << "a negative wait was accepted";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
  }
  EXPECT_EQ(evalsha_calls(admin), before) << "an attempt was sent";
  EXPECT_EQ(distlock::detail::Access::impl(client)->watchdog().size(), 0u);
}

// get_executor(client) is the Client's I/O thread: a coroutine spawned there
// resumes on that thread after every operation (no hop), and a blocking call
// made there is refused rather than deadlocking.
TEST(LockAsync, CoroutinesOnTheClientsExecutorResumeOnItsIOThreadWhereBlockingCallsAreRefused) {
  RedisServer server;
  Client client(options_for(server));
  const std::thread::id io_thread =
      asio::post(get_executor(client), asio::use_future([] { return std::this_thread::get_id(); }))
          .get();
  ASSERT_NE(io_thread, std::this_thread::get_id());
  Lock lock = client.lock("on-the-io-thread");
  auto run = [&]() -> asio::awaitable<std::vector<bool>> {
    std::vector<bool> on_io{std::this_thread::get_id() == io_thread};
    for (int i = 0; i < 3; ++i) {
      Lease lease = co_await lock.async_acquire(asio::use_awaitable);
      on_io.push_back(std::this_thread::get_id() == io_thread);
      co_await lease.async_release(asio::use_awaitable);
      on_io.push_back(std::this_thread::get_id() == io_thread);
    }
    std::error_code ec;
    lock.try_lock(ec);  // blocking: refused on the I/O thread
    on_io.push_back(ec == errc::invalid_argument);
    co_return on_io;
  };
  auto f = asio::co_spawn(get_executor(client), run(), asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), std::vector<bool>(8, true))
      << "a resumption left the I/O thread, or a blocking call there was not refused";
  client.close();
  auto after_close =
      asio::post(get_executor(client), asio::use_future([] { return 1; }));  // still runs
  ASSERT_EQ(after_close.wait_for(10s), std::future_status::ready);
}

TEST(LockAsync, CoroutinesAcquireAndReleaseWithoutBlockingAThread) {
  asio::io_context io;  // run by this thread only; outlives the Clients
  RedisServer server;
  Client client(options_for(server));
  Client admin(options_for(server));
  constexpr int kCoroutines = 16;
  constexpr int kRounds = 20;
  int finished = 0;
  std::error_code first_error;
  for (int c = 0; c < kCoroutines; ++c) {
    asio::co_spawn(
        io,
        [&, c]() -> asio::awaitable<void> {
          Lock lock = client.lock("coro-" + std::to_string(c % 4));
          for (int i = 0; i < kRounds; ++i) {
            Lease lease = co_await lock.async_acquire(asio::use_awaitable);
            co_await lease.async_release(asio::use_awaitable);
            if (lease.valid()) first_error = make_error_code(errc::invalid_argument);
          }
          ++finished;
        },
        [&](std::exception_ptr e) {
          if (!e) return;
          try {
            std::rethrow_exception(e);
          } catch (const Error& err) {
            first_error = err.code();
          }
        });
  }
  io.run_for(60s);  // returns once every coroutine has finished
  EXPECT_FALSE(first_error) << first_error.message();
  EXPECT_EQ(finished, kCoroutines);
  for (int n = 0; n < 4; ++n) {
    EXPECT_EQ(admin.command("EXISTS", "coro-" + std::to_string(n)).as_integer(), 0);
  }
  EXPECT_EQ(distlock::detail::Access::impl(client)->watchdog().size(), 0u);
}

TEST(LockAsync, AnAcquireLosingARaceToATimerIsCancelledByTheAwaitableOperator) {
  using namespace asio::experimental::awaitable_operators;
  asio::io_context io;  // outlives the Clients, which complete into it
  RedisServer server;
  Client holder(options_for(server));
  Client waiter(options_for(server));
  holder.lock("raced").lock();
  std::optional<std::variant<Lease, std::monostate>> result;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer timer(io, 200ms);
        // The lock is held for the whole test: only the timer can win.
        result.emplace(co_await (waiter.lock("raced").async_acquire(asio::use_awaitable) ||
                                 timer.async_wait(asio::use_awaitable)));
      },
      asio::detached);
  io.run_for(30s);  // a bound, should the acquire ignore its cancellation
  ASSERT_TRUE(result.has_value()) << "the race never ended";
  EXPECT_EQ(result->index(), 1u) << "the acquire won while the lock was held";
  EXPECT_EQ(distlock::detail::Access::impl(waiter)->watchdog().size(), 0u)
      << "a renewal is still scheduled";
  EXPECT_TRUE(
      eventually([&] { return subscribers(holder, "redisson_lock__channel:{raced}") == 0; }, 10s));
}

TEST(LockAsync, AsyncReleaseOfAnEmptyLeaseCompletesWithNoError) {
  RedisServer server;
  Client client(options_for(server));
  Lease empty;
  auto f = empty.async_release(asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_NO_THROW(f.get());
}

TEST(LockAsync, AsyncReleaseOnAClosedClientReportsClosed) {
  RedisServer server;
  Client client(options_for(server));
  auto f = client.lock("closing").async_acquire(asio::use_future);
  Lease lease = f.get();
  client.close();
  std::promise<std::error_code> done;
  lease.async_release([&](std::error_code ec) { done.set_value(ec); });
  auto g = done.get_future();
  ASSERT_EQ(g.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(g.get(), errc::closed);
  EXPECT_FALSE(lease.valid());
}

TEST(LockAsync, ALeaseDroppedInsideAHandlerOnTheIoThreadIsReleasedWithoutBlocking) {
  RedisServer server;
  Client client(options_for(server));
  Client admin(options_for(server));
  std::promise<bool> done;
  client.lock("dropped").async_acquire([&](std::error_code ec, Lease lease) {
    const bool ok = !ec && lease.valid();
    { Lease gone = std::move(lease); }  // released here, on the I/O thread
    done.set_value(ok);
  });
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "the I/O thread blocked";
  EXPECT_TRUE(f.get());
  EXPECT_TRUE(
      eventually([&] { return admin.command("EXISTS", "dropped").as_integer() == 0; }, 10s));
}

}  // namespace
}  // namespace distlock
