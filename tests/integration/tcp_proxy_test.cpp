// The test proxy (tests/support/tcp_proxy.hpp) against a real redis-server:
// it forwards, holds, delays and drops as it says, so the fault tests built
// on it test the library, not the proxy.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <chrono>
#include <future>
#include <string>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::RedisServer;
using test::TcpProxy;

TEST(TcpProxy, ForwardsCommandsAndRepliesBothWays) {
  RedisServer server;
  TcpProxy proxy(server.port());
  Client c(proxy.uri());
  c.command("SET", "through", "proxy");
  EXPECT_EQ(server.cli({"GET", "through"}), "proxy");
  EXPECT_EQ(c.command("GET", "through").as_string(), "proxy");
  EXPECT_EQ(proxy.connections(), 1u);
}

TEST(TcpProxy, HoldKeepsARequestFromTheServerUntilResume) {
  RedisServer server;
  TcpProxy proxy(server.port());
  Client c(proxy.uri());
  proxy.hold();
  auto reply = c.async_command({"INCR", "held"}, asio::use_future);
  ASSERT_TRUE(eventually([&] { return proxy.pending_bytes() > 0; }, 10s));
  EXPECT_EQ(server.cli({"GET", "held"}), "") << "a held request reached the server";
  proxy.resume();
  ASSERT_EQ(reply.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(reply.get().as_integer(), 1);
  EXPECT_EQ(proxy.pending_bytes(), 0u);
}

TEST(TcpProxy, DelayForwardsEachRequestNoEarlierThanTheDelay) {
  RedisServer server;
  TcpProxy proxy(server.port());
  Client c(proxy.uri());
  proxy.set_delay(150ms);
  const auto start = std::chrono::steady_clock::now();
  c.command("PING");
  // A lower bound only: the proxy guarantees it; nothing bounds it above.
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms) << "request and reply each delayed";
  proxy.set_delay(0ms);
  c.command("PING");
}

TEST(TcpProxy, DropAllClosesEveryConnectionAndNewOnesStillWork) {
  RedisServer server;
  TcpProxy proxy(server.port());
  ClientOptions o = test::options_for(server);
  o.host = "127.0.0.1";
  o.port = proxy.port();
  Client c(o);
  c.command("PING");
  proxy.hold();
  auto reply = c.async_command({"PING"}, asio::use_future);
  ASSERT_TRUE(eventually([&] { return proxy.pending_bytes() > 0; }, 10s));
  proxy.drop_all();
  EXPECT_EQ(proxy.connections(), 0u);
  EXPECT_EQ(proxy.pending_bytes(), 0u);
  try {
    reply.get();
    FAIL() << "a dropped connection's request succeeded";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), errc::connection_lost);
  }
  proxy.resume();
  // The Client reconnects through the proxy.
  EXPECT_TRUE(eventually(
      [&] {
        std::error_code ec;
        const std::string_view ping[] = {"PING"};
        c.command(ping, ec);
        return !ec;
      },
      10s));
}

}  // namespace
}  // namespace distlock
