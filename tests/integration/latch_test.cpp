// The countdown latch against real redis-server processes.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "integration/async_helpers.hpp"
#include "integration/settled_waiters.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;
using test::subscribers;

const std::string kChannel = "redisson_countdownlatch__channel:{gate}";

TEST(Latch, TrySetCountSucceedsOnlyForTheFirstCallAcrossClients) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  EXPECT_TRUE(a.latch("gate").try_set_count(3));
  EXPECT_FALSE(b.latch("gate").try_set_count(5));
  EXPECT_FALSE(a.latch("gate").try_set_count(3));
  EXPECT_EQ(b.latch("gate").count(), 3);
  EXPECT_EQ(a.command("GET", "gate").as_string(), "3") << "Redisson's layout: a string count";
}

TEST(Latch, CountsDownToZeroAndThenIsOpen) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  Latch la = a.latch("gate"), lb = b.latch("gate");
  ASSERT_TRUE(la.try_set_count(3));
  la.count_down();
  EXPECT_EQ(lb.count(), 2);
  lb.count_down();
  EXPECT_EQ(la.count(), 1);
  EXPECT_FALSE(lb.wait_for(0ms));
  la.count_down();
  EXPECT_EQ(lb.count(), 0);
  EXPECT_TRUE(lb.wait_for(0ms));
  EXPECT_EQ(a.command("EXISTS", "gate").as_integer(), 0) << "an open latch has no key";
}

TEST(Latch, CountDownAtZeroIsSilentAndChangesNothing) {
  RedisServer server;
  Client client(options_for(server));
  Latch latch = client.latch("gate");
  EXPECT_NO_THROW(latch.count_down()) << "never set";
  ASSERT_TRUE(latch.try_set_count(1));
  latch.count_down();
  EXPECT_NO_THROW(latch.count_down()) << "at zero";
  std::error_code ec;
  latch.count_down(ec);
  EXPECT_FALSE(ec);
  EXPECT_EQ(latch.count(), 0);
  EXPECT_EQ(client.command("EXISTS", "gate").as_integer(), 0);
  EXPECT_TRUE(latch.try_set_count(2)) << "a latch back at zero can be set again";
}

TEST(Latch, AnUnsetLatchIsOpen) {
  RedisServer server;
  Client client(options_for(server));
  Latch latch = client.latch("never-set");
  EXPECT_EQ(latch.count(), 0);
  EXPECT_TRUE(latch.wait_for(0ms));
  EXPECT_TRUE(latch.wait_until(std::chrono::steady_clock::now()));
  auto done = std::async(std::launch::async, [&] { latch.wait(); });
  EXPECT_EQ(done.wait_for(20s), std::future_status::ready);
}

TEST(Latch, WaitForTimesOutWhileTheCountIsAboveZero) {
  RedisServer server;
  Client client(options_for(server));
  Latch latch = client.latch("gate");
  ASSERT_TRUE(latch.try_set_count(1));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(latch.wait_for(300ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_EQ(latch.count(), 1);
}

TEST(Latch, WaitForReturnsTrueRightAfterAnotherClientsLastCountDown) {
  // Waiters re-read the count only every 10 minutes, beyond every bound
  // below: the wake-up can only be the zero-count message.
  const test::NoLatchRecheck by_message_only;
  RedisServer server;
  Client waiter(options_for(server)), counter(options_for(server));
  ASSERT_TRUE(counter.latch("gate").try_set_count(2));
  const long long before = test::evalsha_calls(counter);
  // The wait outlasts the bound below: its last read, at its deadline,
  // cannot be what ends it within the bound.
  auto waited = std::async(std::launch::async, [&] { return waiter.latch("gate").wait_for(60s); });
  // Subscribed and read again after subscribing: only the message is left.
  ASSERT_TRUE(test::waiters_settled(counter, kChannel, 1, before, 2));
  counter.latch("gate").count_down();
  EXPECT_EQ(waited.wait_for(300ms), std::future_status::timeout) << "one count is left";
  counter.latch("gate").count_down();
  ASSERT_EQ(waited.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(waited.get());
}

TEST(Latch, WaitersInSeveralClientsAndAnotherProcessAreAllReleasedTogether) {
  // Here and in the other process (latch-wait sets the same), waiters
  // re-read the count only every 10 minutes, beyond every bound below: each
  // wake-up can only be the zero-count message.
  const test::NoLatchRecheck by_message_only;
  RedisServer server;
  Client opener(options_for(server));
  ASSERT_TRUE(opener.latch("gate").try_set_count(1));
  const long long before = test::evalsha_calls(opener);
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<std::future<void>> waits;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<Client>(options_for(server)));
    for (int t = 0; t < 2; ++t) {
      Latch latch = clients.back()->latch("gate");
      waits.push_back(
          std::async(std::launch::async, [latch]() mutable { EXPECT_TRUE(latch.wait_for(60s)); }));
    }
  }
  auto other =
      test::ChildProcess::spawn({DISTLOCK_LOCK_WORKER, "latch-wait", server.uri(), "gate"});
  // Three Clients and the other process have joined the channel, and each
  // of the 7 waits has read the count again after joining it.
  ASSERT_TRUE(test::waiters_settled(opener, kChannel, 4, before, 2 * 7));
  for (auto& w : waits) EXPECT_EQ(w.wait_for(0ms), std::future_status::timeout);
  opener.latch("gate").count_down();
  for (auto& w : waits) {
    ASSERT_EQ(w.wait_for(20s), std::future_status::ready);
    w.get();
  }
  const auto status = other.wait_for_exit(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(test::describe_wait_status(*status), test::describe_wait_status(0));
}

// docs/latch.md: a waiter whose connection drops re-subscribes with the
// Client and reads the count again. The latch opens while the waiter's
// pub/sub connection is down and its reconnect is held in a proxy, so the
// zero-count message reaches nobody; the periodic re-read is 10 minutes
// away and the wait outlasts the bound: only the read after the reconnect
// can open it within the bound.
TEST(Latch, AWaiterWhoseConnectionDroppedReadsTheCountAgainWhenItIsBack) {
  const test::NoLatchRecheck by_message_only;
  RedisServer server;
  test::TcpProxy proxy(server.port());
  ClientOptions through = ClientOptions::from_uri(proxy.uri());
  through.reconnect_min_delay = 10ms;
  through.reconnect_max_delay = 100ms;
  Client waiter(through), counter(options_for(server));
  ASSERT_TRUE(counter.latch("gate").try_set_count(1));
  const long long before = test::evalsha_calls(counter);
  auto waited = std::async(std::launch::async, [&] { return waiter.latch("gate").wait_for(60s); });
  ASSERT_TRUE(test::waiters_settled(counter, kChannel, 1, before, 2));
  proxy.hold();  // the reconnect (and its SUBSCRIBE) waits in the proxy
  server.cli({"CLIENT", "KILL", "TYPE", "pubsub"});
  ASSERT_TRUE(eventually([&] { return subscribers(counter, kChannel) == 0; }, 20s));
  counter.latch("gate").count_down();
  EXPECT_EQ(subscribers(counter, kChannel), 0) << "the zero-count message had a subscriber";
  EXPECT_EQ(counter.latch("gate").count(), 0);
  EXPECT_EQ(waited.wait_for(0ms), std::future_status::timeout) << "opened with no connection";
  proxy.resume();
  ASSERT_EQ(waited.wait_for(20s), std::future_status::ready)
      << "the waiter did not read the count again after its reconnect";
  EXPECT_TRUE(waited.get());
}

TEST(Latch, ANegativeCountIsRejectedAndNothingIsSet) {
  RedisServer server;
  Client client(options_for(server));
  Latch latch = client.latch("gate");
  EXPECT_THROW(latch.try_set_count(-1), Error);
  std::error_code ec;
  EXPECT_FALSE(latch.try_set_count(-1, ec));
  EXPECT_EQ(ec, errc::invalid_argument);
  EXPECT_EQ(client.command("EXISTS", "gate").as_integer(), 0);
}

}  // namespace
}  // namespace distlock
