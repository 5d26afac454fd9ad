// MultiLock's async forms: every completion token, all or nothing under
// contention and cancellation, and many coroutines on one thread.
#include <gtest/gtest.h>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client_impl.hpp"
#include "distlock/distlock.hpp"
#include "distlock/multi_lock_async.hpp"
#include "integration/async_helpers.hpp"
#include "runtime/watchdog.hpp"
#include "support/app_thread.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

bool exists(Client& client, const std::string& key) {
  return client.command("EXISTS", key).as_integer() == 1;
}

std::string channel(const std::string& name) {
  return "redisson_lock__channel:{" + name + "}";
}

// Holds `name` through `client` from another thread, as another owner would.
void held_elsewhere(Client& client, const std::string& name) {
  std::async(std::launch::async, [&] { client.lock(name).lock(); }).get();
}

using test::AppThread;

struct Outcome {
  std::error_code ec;
  bool valid = false;
};

TEST(MultiLockAsync, ACallbackGetsEveryPartOnTwoServersAndAsyncReleaseFreesThemAll) {
  RedisServer first_server;
  RedisServer second_server;
  Client first(options_for(first_server));
  Client second(options_for(second_server));
  MultiLock multi({second.lock("x"), first.lock("x"), first.lock("y")});
  std::promise<MultiLease> got;
  multi.async_lock([&](std::error_code ec, MultiLease lease) {
    if (ec) ADD_FAILURE() << ec.message();
    got.set_value(std::move(lease));
  });
  auto f = got.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  MultiLease lease = f.get();
  EXPECT_TRUE(lease.valid());
  EXPECT_EQ(lease.parts().size(), 3u);
  EXPECT_TRUE(exists(first, "x"));
  EXPECT_TRUE(exists(first, "y"));
  EXPECT_TRUE(exists(second, "x"));
  EXPECT_GT(lease.deadline(), std::chrono::steady_clock::now());

  std::promise<std::error_code> released;
  lease.async_release([&](std::error_code ec) { released.set_value(ec); });
  EXPECT_FALSE(lease.valid()) << "the handle is empty as soon as async_release returns";
  auto r = released.get_future();
  ASSERT_EQ(r.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(r.get());
  EXPECT_FALSE(exists(first, "x"));
  EXPECT_FALSE(exists(first, "y"));
  EXPECT_FALSE(exists(second, "x"));
}

TEST(MultiLockAsync, UseFutureGetsEveryPartAndADroppedHandleReleasesThem) {
  RedisServer server;
  Client client(options_for(server));
  MultiLock multi({client.lock("a"), client.lock("b")});
  auto f = multi.async_try_lock_for(10s, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  {
    std::optional<MultiLease> lease = f.get();  // no error: it throws on one
    ASSERT_TRUE(lease.has_value());
    EXPECT_TRUE(lease->valid());
    EXPECT_TRUE(multi.parts()[0].is_locked());
    EXPECT_TRUE(multi.parts()[1].is_locked());
    EXPECT_EQ(test::renewals(client), 2u) << "each part is renewed by the watchdog";
  }
  EXPECT_FALSE(exists(client, "a"));
  EXPECT_FALSE(exists(client, "b"));
  EXPECT_EQ(test::renewals(client), 0u);
}

TEST(MultiLockAsync, UseAwaitableGetsEveryPartAndReleasesThem) {
  asio::io_context io;  // outlives the Client, which completes into it
  RedisServer server;
  Client client(options_for(server));
  MultiLock multi({client.lock("b"), client.lock("a"), client.lock("c")});
  std::vector<bool> seen;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        MultiLease lease = co_await multi.async_lock(asio::use_awaitable);
        seen.push_back(lease.valid());
        for (const char* name : {"a", "b", "c"}) seen.push_back(exists(client, name));
        co_await lease.async_release(asio::use_awaitable);
        for (const char* name : {"a", "b", "c"}) seen.push_back(!exists(client, name));
      },
      asio::detached);
  io.run_for(30s);  // returns once the coroutine has finished
  EXPECT_EQ(seen, std::vector<bool>(7, true));
}

TEST(MultiLockAsync, OnePartHeldElsewhereEndsTryLockForEmptyLeavingNoOtherPartHeld) {
  RedisServer server;
  Client client(options_for(server));
  Client other(options_for(server));
  held_elsewhere(other, "b");
  // "a" is taken before "b" in canonical order, so it must be given back.
  MultiLock multi({client.lock("c"), client.lock("b"), client.lock("a")});
  auto f = multi.async_try_lock_for(300ms, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(f.get().has_value());  // no error: it throws on one
  EXPECT_FALSE(exists(client, "a")) << "the part taken before the held one was not released";
  EXPECT_FALSE(exists(client, "c"));
  EXPECT_FALSE(multi.parts()[0].is_locked());
  EXPECT_TRUE(exists(client, "b")) << "the other owner's hold must stay";
  EXPECT_EQ(test::renewals(client), 0u) << "a renewal is still scheduled";
  EXPECT_TRUE(eventually([&] { return test::subscribers(other, channel("b")) == 0; }, 10s));
}

TEST(MultiLockAsync, ACancelledLockWaitingForAHeldPartEndsAbortedWithNoPartHeld) {
  RedisServer server;
  Client client(options_for(server));
  Client other(options_for(server));
  held_elsewhere(other, "b");
  MultiLock multi({client.lock("a"), client.lock("b"), client.lock("c")});

  AppThread app;
  asio::cancellation_signal signal;
  std::promise<Outcome> done;
  multi.async_lock(asio::bind_cancellation_slot(
      signal.slot(), asio::bind_executor(app.io(), [&](std::error_code ec, MultiLease lease) {
        done.set_value({ec, lease.valid()});
      })));
  // "a" is held and the operation waits for "b" (subscribed to its channel).
  ASSERT_TRUE(eventually([&] { return test::subscribers(other, channel("b")) > 0; }, 10s));
  ASSERT_TRUE(exists(client, "a"));
  asio::post(app.io(), [&] { signal.emit(asio::cancellation_type::terminal); });

  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready) << "the cancelled wait never ended";
  const Outcome o = f.get();
  EXPECT_EQ(o.ec, asio::error::operation_aborted) << o.ec.message();
  EXPECT_FALSE(o.valid);
  EXPECT_FALSE(exists(client, "a")) << "the part taken before the cancel was left held";
  EXPECT_FALSE(exists(client, "c"));
  EXPECT_TRUE(exists(client, "b")) << "the other owner's hold must stay";
  EXPECT_EQ(test::renewals(client), 0u) << "a renewal is still scheduled";
  EXPECT_TRUE(eventually([&] { return test::subscribers(other, channel("b")) == 0; }, 10s))
      << "the cancelled waiter's subscription was left behind";
  // The other owner's unlock finds nobody waiting: nothing is taken.
  other.lock("b").force_unlock();
  EXPECT_FALSE(exists(client, "b"));
}

TEST(MultiLockAsync, ANegativeWaitFailsWithInvalidArgumentAndTakesNothing) {
  RedisServer server;
  Client client(options_for(server));
  MultiLock multi({client.lock("a"), client.lock("b")});
  auto f = multi.async_try_lock_for(-1ms, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(test::error_of(f), errc::invalid_argument);
  EXPECT_FALSE(exists(client, "a"));
  EXPECT_EQ(test::renewals(client), 0u);
}

TEST(MultiLockAsync, AsyncReleaseOfAnEmptyHandleCompletesWithNoError) {
  MultiLease empty;
  auto f = empty.async_release(asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_NO_THROW(f.get());
}

// 64 coroutines on one thread, each taking a multi-lock of two or three of
// three names (on two servers) again and again: a name is never inside two
// critical sections at once, and every coroutine finishes.
TEST(MultiLockAsync, SixtyFourCoroutinesOnOneThreadNeverOverlapOnASharedPart) {
  asio::io_context io;  // run by this thread only; outlives the Clients
  RedisServer first_server;
  RedisServer second_server;
  Client first(options_for(first_server));
  Client second(options_for(second_server));
  const std::vector<Lock> pool{first.lock("p"), first.lock("q"), second.lock("r")};
  const std::vector<std::vector<int>> shapes{{0, 1}, {1, 2}, {2, 0}, {0, 1, 2}};
  constexpr int kCoroutines = 64;
  constexpr int kRounds = 4;
  std::map<std::string, int> inside;  // per name: coroutines in a critical section
  int overlaps = 0;
  int finished = 0;
  std::error_code first_error;
  for (int c = 0; c < kCoroutines; ++c) {
    std::vector<Lock> parts;
    for (int i : shapes[c % shapes.size()]) parts.push_back(pool[i]);
    asio::co_spawn(
        io,
        [&, multi = MultiLock(parts)]() mutable -> asio::awaitable<void> {
          for (int round = 0; round < kRounds; ++round) {
            MultiLease lease = co_await multi.async_lock(asio::use_awaitable);
            for (const Lock& p : multi.parts()) overlaps += ++inside[p.name()] > 1 ? 1 : 0;
            // Let every other coroutine run while this one is inside.
            co_await asio::post(io, asio::use_awaitable);
            for (const Lock& p : multi.parts()) --inside[p.name()];
            co_await lease.async_release(asio::use_awaitable);
          }
          ++finished;
        },
        [&](std::exception_ptr e) {
          if (!e) return;
          try {
            std::rethrow_exception(e);
          } catch (const Error& err) {
            first_error = err.code();
          } catch (const std::system_error& err) {
            first_error = err.code();
          }
        });
  }
  io.run_for(120s);  // returns once every coroutine has finished
  EXPECT_FALSE(first_error) << first_error.message();
  EXPECT_EQ(finished, kCoroutines);
  EXPECT_EQ(overlaps, 0) << "two coroutines held one name at once";
  EXPECT_FALSE(exists(first, "p"));
  EXPECT_FALSE(exists(first, "q"));
  EXPECT_FALSE(exists(second, "r"));
  EXPECT_EQ(test::renewals(first) + test::renewals(second), 0u);
}

}  // namespace
}  // namespace distlock
