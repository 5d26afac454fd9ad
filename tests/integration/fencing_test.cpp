// fenced_set / fenced_hset: writes only a current lock holder can make.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

#include "distlock/distlock.hpp"
#include "distlock/fencing.hpp"
#include "support/redis_server.hpp"
#include "topology/slot.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::RedisServer;

ClientOptions options_for(const RedisServer& server) {
  ClientOptions o = ClientOptions::from_uri(server.uri());
  o.watchdog_timeout = 2s;
  return o;
}

TEST(Fencing, AcceptsIncreasingTokensAndKeepsTheHighestInTheFenceKey) {
  RedisServer server;
  Client client(options_for(server));
  EXPECT_TRUE(fenced_set(client, "doc", "one", 1));
  EXPECT_TRUE(fenced_set(client, "doc", "five", 5));
  EXPECT_TRUE(fenced_set(client, "doc", "nine", 9));
  EXPECT_EQ(client.command("GET", "doc").as_string(), "nine");
  EXPECT_EQ(client.command("GET", fence_key("doc")).as_string(), "9");
}

TEST(Fencing, RejectsAStaleTokenAndLeavesValueAndFenceUnchanged) {
  RedisServer server;
  Client client(options_for(server));
  ASSERT_TRUE(fenced_set(client, "doc", "from 10", 10));
  EXPECT_FALSE(fenced_set(client, "doc", "from 9", 9));
  EXPECT_FALSE(fenced_set(client, "doc", "from 0", 0));
  EXPECT_EQ(client.command("GET", "doc").as_string(), "from 10");
  EXPECT_EQ(client.command("GET", fence_key("doc")).as_string(), "10");
}

TEST(Fencing, AcceptsTheSameTokenAgainSoOneHoldingMayWriteTwice) {
  RedisServer server;
  Client client(options_for(server));
  ASSERT_TRUE(fenced_set(client, "doc", "first", 7));
  EXPECT_TRUE(fenced_set(client, "doc", "second", 7));
  EXPECT_EQ(client.command("GET", "doc").as_string(), "second");
}

TEST(Fencing, ComparesTokensAsIntegersUpToTheLargestUint64) {
  RedisServer server;
  Client client(options_for(server));
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  ASSERT_TRUE(fenced_set(client, "doc", "nine", 9));
  EXPECT_TRUE(fenced_set(client, "doc", "ten", 10)) << "10 > 9 although \"10\" < \"9\" as text";
  ASSERT_TRUE(fenced_set(client, "doc", "max", kMax));
  // Both round to 2^64 as doubles; they must still compare.
  EXPECT_FALSE(fenced_set(client, "doc", "max-1", kMax - 1));
  EXPECT_EQ(client.command("GET", "doc").as_string(), "max");
}

TEST(Fencing, HsetSharesTheFenceOfItsKeyAndWritesTheField) {
  RedisServer server;
  Client client(options_for(server));
  ASSERT_TRUE(fenced_hset(client, "order", "state", "paid", 3));
  EXPECT_FALSE(fenced_hset(client, "order", "state", "cancelled", 2));
  EXPECT_TRUE(fenced_hset(client, "order", "state", "shipped", 4));
  EXPECT_EQ(client.command("HGET", "order", "state").as_string(), "shipped");
  EXPECT_EQ(client.command("GET", fence_key("order")).as_string(), "4");
}

TEST(Fencing, EmptyKeyIsRejectedWithInvalidArgumentBeforeAnythingIsSent) {
  RedisServer server;
  Client client(options_for(server));
  try {
    fenced_set(client, "", "v", 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
  std::error_code ec;
  EXPECT_FALSE(fenced_hset(client, "", "f", "v", 1, ec));
  EXPECT_EQ(ec, errc::invalid_argument);
  EXPECT_THROW(fence_key(""), Error);
  EXPECT_EQ(client.command("DBSIZE").as_integer(), 0);
}

TEST(Fencing, WrongTypeDataKeyFailsWithServerErrorAndMovesNoFence) {
  RedisServer server;
  Client client(options_for(server));
  client.command("SET", "a-string", "x");
  try {
    fenced_hset(client, "a-string", "f", "v", 5);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::server_error);
    EXPECT_NE(std::string(e.what()).find("WRONGTYPE"), std::string::npos) << e.what();
  }
  EXPECT_EQ(client.command("EXISTS", fence_key("a-string")).as_integer(), 0);
}

TEST(Fencing, FenceKeyHoldingNoTokenFailsWithServerErrorNamingIt) {
  RedisServer server;
  Client client(options_for(server));
  client.command("SET", fence_key("doc"), "not-a-number");
  std::error_code ec;
  EXPECT_FALSE(fenced_set(client, "doc", "v", 1, ec));
  EXPECT_EQ(ec, errc::server_error);
  try {
    fenced_set(client, "doc", "v", 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fence_key("doc")), std::string::npos) << e.what();
  }
  EXPECT_EQ(client.command("EXISTS", "doc").as_integer(), 0);
}

TEST(Fencing, FenceKeyIsInTheClusterSlotOfItsKey) {
  for (const std::string key :
       {"doc", "{user:1}:cart", "a{b", "a}b", "{}x}", "x{}y{z}", "}", "{"}) {
    const std::string fence = fence_key(key);
    EXPECT_EQ(topology::key_slot(fence), topology::key_slot(key)) << key << " -> " << fence;
    EXPECT_NE(fence, key);
    EXPECT_EQ(fence, fence_key(key)) << "deterministic";
  }
  EXPECT_EQ(fence_key("doc"), "distlock_fence:{doc}");
  EXPECT_EQ(fence_key("{user:1}:cart"), "distlock_fence:{user:1}:cart");
}

TEST(Fencing, ClosedClientFailsWithClosed) {
  RedisServer server;
  Client client(options_for(server));
  client.close();
  std::error_code ec;
  EXPECT_FALSE(fenced_set(client, "doc", "v", 1, ec));
  EXPECT_EQ(ec, errc::closed);
  EXPECT_THROW(fenced_set(client, "doc", "v", 1), Error);
}

TEST(Fencing, CalledOnTheClientsIoThreadFailsWithInvalidArgumentInsteadOfDeadlocking) {
  RedisServer server;
  Client client(options_for(server));
  std::promise<std::error_code> result;
  client.async_command({"PING"}, [&](std::error_code, Value) {
    std::error_code ec;
    fenced_set(client, "doc", "v", 1, ec);
    result.set_value(ec);
  });
  auto f = result.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), errc::invalid_argument);
}

// End to end: a holder whose lease ran out comes back with its old token and
// is turned away; the new holder's write stands.
TEST(Fencing, TokensOfAFencedLockTurnAwayAHolderWhoseLeaseRanOut) {
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  std::optional<Lease> first = a.fenced_lock("job").try_acquire_for(0ms, 500ms);
  ASSERT_TRUE(first.has_value());
  const std::uint64_t old_token = first->fencing_token().value();
  ASSERT_TRUE(fenced_set(a, "job:result", "a started", old_token));

  std::optional<Lease> second = b.fenced_lock("job").try_acquire_for(10s);  // after 500 ms
  ASSERT_TRUE(second.has_value());
  const std::uint64_t new_token = second->fencing_token().value();
  EXPECT_GT(new_token, old_token);
  EXPECT_TRUE(fenced_set(b, "job:result", "b finished", new_token));

  EXPECT_FALSE(fenced_set(a, "job:result", "a finished late", old_token));
  EXPECT_EQ(a.command("GET", "job:result").as_string(), "b finished");
  std::error_code ec;
  first->release(ec);
  EXPECT_EQ(ec, errc::lease_lost);
}

}  // namespace
}  // namespace distlock
