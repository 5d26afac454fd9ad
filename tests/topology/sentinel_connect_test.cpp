// Sentinel discovery's failures (issue 13: bad input, each a clear error
// within the connect timeout) and the two net::Connection additions the
// Sentinel topology follows a failover with: retarget() and on_readonly.
// Lone servers only (a sentinel monitoring nothing, or one node): fast.
#include <gtest/gtest.h>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "net/connection.hpp"
#include "resp/encoder.hpp"
#include "support/redis_server.hpp"
#include "support/refusing_port.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::RedisServer;
using Clock = std::chrono::steady_clock;

test::RedisServerOptions lone_sentinel(std::vector<std::pair<std::string, std::string>> config) {
  test::RedisServerOptions o;
  o.sentinel = true;
  o.config = std::move(config);
  return o;
}

// Constructs a Client; returns the Error it throws (code clear if none) and
// how long it took.
struct Outcome {
  std::error_code code;
  std::string message;
  std::chrono::milliseconds took{0};
};
Outcome connecting(const ClientOptions& o) {
  Outcome out;
  const auto start = Clock::now();
  try {
    Client client(o);
  } catch (const Error& e) {
    out.code = e.code();
    out.message = e.what();
  }
  out.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  return out;
}

TEST(SentinelConnect, ASentinelThatKnowsNoSuchMasterFailsWithAMessageNamingIt) {
  RedisServer sentinel(lone_sentinel({}));
  ClientOptions o = ClientOptions::from_uri(
      "redis-sentinel://127.0.0.1:" + std::to_string(sentinel.port()) + "/no-such-master");
  o.connect_timeout = 3s;
  const Outcome out = connecting(o);
  EXPECT_EQ(out.code, errc::connection_failed) << out.message;
  EXPECT_NE(out.message.find("knows no master named 'no-such-master'"), std::string::npos)
      << out.message;
  EXPECT_NE(out.message.find(std::to_string(sentinel.port())), std::string::npos) << out.message;
  EXPECT_LT(out.took, o.connect_timeout + 5s) << "no hang";
}

TEST(SentinelConnect, UnreachableSentinelsFailNamingEachWithoutAnyPassword) {
  test::RefusingPort first;
  test::RefusingPort second;
  ClientOptions o = ClientOptions::from_uri(
      "redis-sentinel://alice:data-s3cret@127.0.0.1:" + std::to_string(first.port()) +
      ",127.0.0.1:" + std::to_string(second.port()) +
      "/mymaster?sentinel_username=bob&sentinel_password=sentinel-s3cret");
  o.connect_timeout = 3s;
  const Outcome out = connecting(o);
  EXPECT_EQ(out.code, errc::connection_failed) << out.message;
  EXPECT_NE(out.message.find("127.0.0.1:" + std::to_string(first.port())), std::string::npos)
      << out.message;
  EXPECT_NE(out.message.find("127.0.0.1:" + std::to_string(second.port())), std::string::npos)
      << out.message;
  EXPECT_NE(out.message.find("'mymaster'"), std::string::npos) << out.message;
  EXPECT_EQ(out.message.find("s3cret"), std::string::npos) << out.message;
  EXPECT_LT(out.took, o.connect_timeout + 5s) << "no hang";
}

TEST(SentinelConnect, ASentinelNamingAReplicaFailsSayingItIsNotAMaster) {
  RedisServer master;
  test::RedisServerOptions replica_options;
  replica_options.config = {{"replicaof", "127.0.0.1 " + std::to_string(master.port())}};
  RedisServer replica(replica_options);
  // The sentinel is told the replica is the master: it names it as such.
  RedisServer sentinel(lone_sentinel(
      {{"sentinel", "monitor mymaster 127.0.0.1 " + std::to_string(replica.port()) + " 1"}}));
  ClientOptions o = ClientOptions::from_uri(
      "redis-sentinel://127.0.0.1:" + std::to_string(sentinel.port()) + "/mymaster");
  const Outcome out = connecting(o);
  EXPECT_EQ(out.code, errc::connection_failed) << out.message;
  EXPECT_NE(out.message.find("which is not a master (ROLE: slave)"), std::string::npos)
      << out.message;
}

TEST(SentinelConnect, AnUnreachableSentinelIsSkippedForTheNextOne) {
  test::RefusingPort down;
  RedisServer master;
  RedisServer sentinel(lone_sentinel(
      {{"sentinel", "monitor mymaster 127.0.0.1 " + std::to_string(master.port()) + " 1"}}));
  Client client(
      ClientOptions::from_uri("redis-sentinel://127.0.0.1:" + std::to_string(down.port()) +
                              ",127.0.0.1:" + std::to_string(sentinel.port()) + "/mymaster"));
  client.command("SET", "skipped:k", "v");
  EXPECT_EQ(master.cli({"GET", "skipped:k"}), "v");
}

TEST(SentinelConnect, AnEmptyMasterNameIsRejectedBeforeAnyIo) {
  test::RefusingPort port;
  ClientOptions o;
  o.deployment = ClientOptions::Deployment::sentinel;
  o.seeds = {{"127.0.0.1", port.port()}};
  const Outcome out = connecting(o);
  EXPECT_EQ(out.code, errc::invalid_argument) << out.message;
  EXPECT_NE(out.message.find("sentinel_master"), std::string::npos) << out.message;
}

// --- net::Connection: retarget() and on_readonly ------------------------------

struct IoThread {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::thread thread{[this] { io.run(); }};
  ~IoThread() {
    work.reset();
    thread.join();
  }
};

Value call(net::Connection& c, std::vector<std::string_view> args, std::error_code& ec) {
  std::string payload;
  resp::encode_command(payload, args);
  net::SyncCompletion done;
  ec = c.submit(std::move(payload), 1, &done);
  if (ec) return {};
  return done.wait(ec);
}

std::string port_of(net::Connection& c) {
  std::error_code ec;
  const Value reply = call(c, {"CONFIG", "GET", "port"}, ec);
  if (ec || !reply.is_array() || reply.as_array().size() != 2) return "?";
  return reply.as_array()[1].as_string();
}

TEST(ConnectionRetarget, MovesAnUpConnectionFailingItsInFlightRequestAndReportsAReconnect) {
  RedisServer a;
  RedisServer b;
  IoThread io;
  std::atomic<int> reconnects{0};
  net::Connection::Handlers h;
  h.on_connected = [&](bool reconnected) { reconnects += reconnected ? 1 : 0; };
  const ClientOptions o = test::options_for(a);
  auto c = std::make_shared<net::Connection>(io.io, o, nullptr, net::Connection::Role::data, h);
  std::error_code ec;
  std::string message;
  c->connect(ec, message);
  ASSERT_FALSE(ec) << message;
  ASSERT_EQ(port_of(*c), std::to_string(a.port()));

  // A request in flight on `a` (blocked in BLPOP) when the move happens.
  std::string payload;
  const std::string_view blpop[] = {"BLPOP", "retarget:never", "0"};
  resp::encode_command(payload, blpop);
  net::SyncCompletion blocked;
  ASSERT_FALSE(c->submit(std::move(payload), 1, &blocked));
  ASSERT_TRUE(eventually(
      [&] {
        return a.cli({"CLIENT", "LIST"}).find("cmd=blpop") != std::string::npos;
      },
      10s));

  c->retarget("127.0.0.1", b.port());
  blocked.wait(ec);
  EXPECT_EQ(ec, errc::connection_lost) << "never re-sent, never left waiting";
  EXPECT_TRUE(eventually([&] { return reconnects.load() == 1; }, 10s));
  EXPECT_EQ(port_of(*c), std::to_string(b.port()));
  EXPECT_EQ(c->address().port, b.port());
  c->close();
}

TEST(ConnectionRetarget, AReadonlyReplyCompletesWithConnectionLostAndCallsTheHandler) {
  RedisServer master;
  test::RedisServerOptions replica_options;
  replica_options.config = {{"replicaof", "127.0.0.1 " + std::to_string(master.port())}};
  RedisServer replica(replica_options);
  IoThread io;
  std::atomic<int> readonly{0};
  net::Connection::Handlers h;
  h.on_readonly = [&] { ++readonly; };
  auto c = std::make_shared<net::Connection>(io.io, test::options_for(replica), nullptr,
                                             net::Connection::Role::data, h);
  std::error_code ec;
  std::string message;
  c->connect(ec, message);
  ASSERT_FALSE(ec) << message;

  const Value reply = call(*c, {"SET", "readonly:k", "v"}, ec);
  EXPECT_EQ(ec, errc::connection_lost);
  EXPECT_TRUE(reply.is_nil());
  EXPECT_EQ(readonly.load(), 1);
  // Reads still answer: only a refused write is turned into a loss.
  EXPECT_TRUE(call(*c, {"GET", "readonly:k"}, ec).is_nil());
  EXPECT_FALSE(ec);
  EXPECT_EQ(readonly.load(), 1);
  c->close();
}

}  // namespace
}  // namespace distlock
