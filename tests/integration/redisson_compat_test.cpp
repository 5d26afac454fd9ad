// Interoperability with Redisson's RLock protocol, checked against what
// Redisson itself does (RedissonObject.prefixName, RedissonLock's unlock
// script), played here with plain commands.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include "distlock/distlock.hpp"
#include "support/raw_subscriber.hpp"
#include "support/redis_server.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::RawSubscriber;
using test::RedisServer;

TEST(RedissonCompat, AnUnlockOfABracedNameIsPublishedOnRedissonsChannelForThatName) {
  RedisServer server;
  Client client(server.uri());
  const std::string name = "{tenant}:job";
  // Redisson adds no braces to a name that has one.
  RawSubscriber redisson_waiter(server.port(), "redisson_lock__channel:" + name);
  ASSERT_TRUE(redisson_waiter.wait_for("subscribe", 10s));
  Lock lock = client.lock(name);
  lock.lock();
  lock.unlock();
  EXPECT_TRUE(redisson_waiter.wait_for("message", 10s))
      << "the unlock was not published on redisson_lock__channel:" << name;
}

TEST(RedissonCompat, AWaiterOnABracedNameIsWokenAtOnceByARedissonStyleUnlock) {
  RedisServer server;
  Client admin(server.uri());
  Client client(server.uri());
  const std::string name = "a{b}c";
  const std::string channel = "redisson_lock__channel:" + name;
  // A Redisson holder, 60 s lease: only a wake-up lets the waiter in soon.
  admin.command("HSET", name, "redisson-uuid:1", "1");
  admin.command("PEXPIRE", name, "60000");
  auto waiter = std::async(std::launch::async, [&] {
    Lock lock = client.lock(name);
    const bool got = lock.try_lock_for(120s);
    if (got) lock.unlock();
    return got;
  });
  const auto bound = std::chrono::steady_clock::now() + 10s;
  while (admin.command("PUBSUB", "NUMSUB", channel).as_array().at(1).as_integer() == 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), bound)
        << "the waiter never subscribed to " << channel;
  }
  // Redisson's unlock: DEL, then PUBLISH on its own channel.
  admin.command("DEL", name);
  admin.command("PUBLISH", channel, "0");
  ASSERT_EQ(waiter.wait_for(30s), std::future_status::ready)
      << "the waiter slept on: it did not hear Redisson's unlock message";
  EXPECT_TRUE(waiter.get());
}

TEST(RedissonCompat, APartialUnlockRearmsTheLeaseAsRedissonsDoes) {
  RedisServer server;
  Client admin(server.uri());
  Client client(server.uri());
  const std::string name = "rearmed";
  Lock lock = client.lock(name);
  lock.lock(30000ms);
  lock.lock(30000ms);
  admin.command("PEXPIRE", name, "2000");  // as if most of the lease had passed
  lock.unlock();
  EXPECT_GT(admin.command("PTTL", name).as_integer(), 2000)
      << "the partial unlock did not re-arm the 30 s lease";
  lock.unlock();
  EXPECT_EQ(admin.command("EXISTS", name).as_integer(), 0);
}

}  // namespace
}  // namespace distlock
