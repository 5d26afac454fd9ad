// A wait too long for milliseconds (hours::max(), seconds::max()) means "as
// long as it takes" for every timed member, blocking and async: converting it
// with a plain ceil<milliseconds>, or adding it to now(), overflows into a
// negative wait (rejected as invalid_argument) or a deadline in the past (one
// attempt). Lock's forms are covered in lock_test.cpp; these are the
// synchronizers'.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <chrono>
#include <future>
#include <string>
#include <system_error>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::RedisServer;

constexpr auto kForever = std::chrono::hours::max();

// True once some connection subscribes to `channel`: the waiter made its
// attempt, found nothing, and is now waiting for a message.
bool waiting_on(Client& admin, const std::string& channel) {
  return test::eventually(
      [&] { return admin.command("PUBSUB", "NUMSUB", channel).as_array()[1].as_integer() > 0; },
      20s);
}

TEST(WaitRounding, LatchWaitsOfHoursMaxWaitForTheCountDownInsteadOfFailing) {
  RedisServer server;
  Client admin(test::options_for(server)), waiter(test::options_for(server));
  const std::string channel = "redisson_countdownlatch__channel:{endless-latch}";
  Latch gate = admin.latch("endless-latch");

  ASSERT_TRUE(gate.try_set_count(1));
  auto blocking = std::async(std::launch::async,
                             [&] { return waiter.latch("endless-latch").wait_for(kForever); });
  ASSERT_TRUE(waiting_on(admin, channel)) << "wait_for(hours::max()) did not wait";
  gate.count_down();
  ASSERT_EQ(blocking.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(blocking.get());

  ASSERT_TRUE(gate.try_set_count(1));
  std::error_code ec;
  auto with_code = std::async(std::launch::async, [&] {
    return waiter.latch("endless-latch").wait_for(std::chrono::seconds::max(), ec);
  });
  ASSERT_TRUE(waiting_on(admin, channel)) << "wait_for(seconds::max(), ec) did not wait";
  gate.count_down();
  ASSERT_EQ(with_code.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(with_code.get());
  EXPECT_FALSE(ec) << ec.message();

  ASSERT_TRUE(gate.try_set_count(1));
  auto async = waiter.latch("endless-latch").async_wait_for(kForever, asio::use_future);
  ASSERT_TRUE(waiting_on(admin, channel)) << "async_wait_for(hours::max()) did not wait";
  gate.count_down();
  ASSERT_EQ(async.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(async.get());
}

// The rate limiter has no channel: a waiting acquire sleeps the server's
// wait. One permit a second, the first taken: each form must wait for the
// next one instead of failing or giving up.
TEST(WaitRounding, RateLimiterAcquiresOfHoursMaxWaitForTheNextPermitInsteadOfFailing) {
  RedisServer server;
  Client client(test::options_for(server));
  RateLimiter limiter = client.rate_limiter("endless-rate");
  ASSERT_TRUE(limiter.try_set_rate(1, 1s));

  ASSERT_TRUE(limiter.try_acquire());
  EXPECT_TRUE(limiter.try_acquire_for(1, kForever)) << "try_acquire_for(1, hours::max())";

  std::error_code ec;
  EXPECT_TRUE(limiter.try_acquire_for(1, std::chrono::seconds::max(), ec))
      << "try_acquire_for(1, seconds::max(), ec)";
  EXPECT_FALSE(ec) << ec.message();

  auto async = limiter.async_try_acquire_for(1, kForever, asio::use_future);
  ASSERT_EQ(async.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(async.get()) << "async_try_acquire_for(1, hours::max())";
}

TEST(WaitRounding, SemaphoreAcquiresOfHoursMaxWaitForAPermitInsteadOfFailing) {
  RedisServer server;
  Client admin(test::options_for(server)), waiter(test::options_for(server));
  const std::string channel = "redisson_sc:{endless-sem}";
  Semaphore pool = admin.semaphore("endless-sem");
  ASSERT_TRUE(pool.try_set_permits(0));

  auto blocking = std::async(std::launch::async, [&] {
    Semaphore s = waiter.semaphore("endless-sem");
    const bool got = s.try_acquire_for(1, kForever);
    if (got) s.release(1);
    return got;
  });
  ASSERT_TRUE(waiting_on(admin, channel)) << "try_acquire_for(1, hours::max()) did not wait";
  pool.add_permits(1);
  ASSERT_EQ(blocking.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(blocking.get());

  Semaphore permits = admin.semaphore("endless-permit");
  ASSERT_TRUE(permits.try_set_permits(0));
  auto permit = std::async(std::launch::async, [&] {
    return waiter.semaphore("endless-permit")
        .try_acquire_permit(1, std::chrono::milliseconds::max())
        .has_value();
  });
  ASSERT_TRUE(waiting_on(admin, "redisson_sc:{endless-permit}"))
      << "try_acquire_permit(1, milliseconds::max()) did not wait";
  permits.add_permits(1);
  ASSERT_EQ(permit.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(permit.get());
}

}  // namespace
}  // namespace distlock
