// The Client against real redis-server processes: pipelining from many
// threads, drops, pauses, scripts, auth, TLS and bad input.
#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <asio/use_future.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client_impl.hpp"
#include "distlock/client.hpp"
#include "distlock/client_async.hpp"
#include "script/script.hpp"
#include "support/redis_server.hpp"
#include "support/refusing_port.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::RedisServer;
using test::RedisServerOptions;

RedisServerOptions with_acl(std::string user_line) {
  RedisServerOptions o;
  o.acl_users.push_back(std::move(user_line));
  return o;
}

RedisServerOptions with_requirepass(std::string password) {
  RedisServerOptions o;
  o.requirepass = std::move(password);
  return o;
}

RedisServerOptions with_tls() {
  RedisServerOptions o;
  o.tls = true;
  return o;
}

RedisServerOptions with_unix_socket() {
  RedisServerOptions o;
  o.unix_socket = true;
  return o;
}

ClientOptions options_for(const RedisServer& server) {
  ClientOptions o = ClientOptions::from_uri(server.uri());
  o.command_timeout = 5s;
  o.reconnect_min_delay = 10ms;
  o.reconnect_max_delay = 200ms;
  return o;
}

// Waits (bounded) until `count` reaches `target`.
bool wait_for_count(const std::atomic<int>& count, int target, std::chrono::seconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (count.load() < target) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(Client, SixtyFourThreadsSharingOneClientEachGetTheirOwnReplies) {
  RedisServer server;
  Client client(options_for(server));
  constexpr int kThreads = 64;
  constexpr int kPairs = 2000;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPairs; ++i) {
        const std::string key = "t" + std::to_string(t) + ":k" + std::to_string(i % 17);
        const std::string value = "v" + std::to_string(t) + ":" + std::to_string(i);
        if (client.command("SET", key, value).as_string() != "OK") ++mismatches;
        if (client.command("GET", key).as_string() != value) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Client, ServerKilledWithAThousandCommandsInFlightFailsEachWithConnectionLostThenRecovers) {
  RedisServer server;
  Client client(options_for(server));
  ASSERT_EQ(client.command("PING").as_string(), "PONG");
  server.pause();  // nothing gets answered from here on
  constexpr int kCommands = 1000;
  std::atomic<int> done{0};
  std::atomic<int> lost{0};
  for (int i = 0; i < kCommands; ++i) {
    client.async_command({"INCR", "counter"}, [&](std::error_code ec, Value) {
      if (ec == errc::connection_lost) ++lost;
      ++done;
    });
  }
  server.kill();
  ASSERT_TRUE(wait_for_count(done, kCommands, 20s)) << "some commands never completed";
  EXPECT_EQ(lost.load(), kCommands);
  server.start();
  EXPECT_EQ(client.command("PING").as_string(), "PONG") << "the same Client works after restart";
}

TEST(Client, PausedServerMakesCallsTimeOutAndTheClientWorksAfterResume) {
  RedisServer server;
  ClientOptions o = options_for(server);
  o.command_timeout = 300ms;
  Client client(o);
  server.pause();
  std::error_code ec;
  const auto start = std::chrono::steady_clock::now();
  client.command(std::vector<std::string_view>{"PING"}, ec);
  EXPECT_EQ(ec, errc::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms) << "timeout came before the bound";
  server.resume();
  EXPECT_EQ(client.command("SET", "k", "after").as_string(), "OK");
  EXPECT_EQ(client.command("GET", "k").as_string(), "after");
}

TEST(Client, ScriptCallSucceedsAfterScriptFlush) {
  RedisServer server;
  Client client(options_for(server));
  const auto script = script::make_script("echo", "return ARGV[1]");
  auto& connection = distlock::detail::Access::impl(client)->topology().data_for("k");
  auto call = [&](std::string_view arg) {
    const std::string_view args[] = {arg};
    net::SyncCompletion done;
    script::ScriptCall sc(connection, script, {}, args, &done);
    EXPECT_FALSE(sc.start());
    std::error_code ec;
    Value v = done.wait(ec);
    EXPECT_FALSE(ec);
    return v;
  };
  EXPECT_EQ(call("one").as_string(), "one");
  client.command("SCRIPT", "FLUSH");
  EXPECT_EQ(call("two").as_string(), "two");
  EXPECT_EQ(client.command("SCRIPT", "EXISTS", script.sha1).as_array()[0].as_integer(), 1);
}

TEST(Client, AclUserWithTheRightPasswordConnects) {
  RedisServer server(with_acl("alice on >wonderland ~* &* +@all"));
  ClientOptions o = options_for(server);
  o.username = "alice";
  o.password = "wonderland";
  Client client(o);
  EXPECT_EQ(client.command("ACL", "WHOAMI").as_string(), "alice");
}

TEST(Client, WrongPasswordFailsWithAuthFailedAndTheMessageHidesThePassword) {
  RedisServer server(with_acl("alice on >wonderland ~* &* +@all"));
  ClientOptions o = options_for(server);
  o.username = "alice";
  o.password = "not-the-Password-42";
  try {
    Client client(o);
    FAIL() << "connected with a wrong password";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::auth_failed);
    EXPECT_EQ(std::string(e.what()).find("not-the-Password-42"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("alice"), std::string::npos) << e.what();
  }
}

TEST(Client, RequirepassServerAcceptsThePasswordFromTheUri) {
  RedisServer server(with_requirepass("s3cret"));
  Client client(server.uri());
  EXPECT_EQ(client.command("PING").as_string(), "PONG");
}

TEST(Client, TlsClientWorksAgainstATlsOnlyServer) {
  RedisServer server(with_tls());
  Client client(server.uri());
  EXPECT_EQ(client.command("SET", "tls", "yes").as_string(), "OK");
  EXPECT_EQ(client.command("GET", "tls").as_string(), "yes");
}

TEST(Client, PlainClientAgainstATlsOnlyServerFailsCleanly) {
  RedisServer server(with_tls());
  ClientOptions o;
  o.host = server.host();
  o.port = server.port();
  o.connect_timeout = 2s;
  try {
    Client client(o);
    FAIL() << "a plain client connected to a TLS-only server";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::connection_failed) << e.what();
  }
}

TEST(Client, UnixSocketClientWorks) {
  RedisServer server(with_unix_socket());
  Client client("unix://" + server.unix_socket_path());
  EXPECT_EQ(client.command("PING").as_string(), "PONG");
}

// A refused connect ends the constructor with that refusal, not with the
// connect timeout. The port is held refusing for the whole test, so no
// server started meanwhile (by another test under ctest -j) can take it.
TEST(Client, ConnectingToARefusingPortFailsWithConnectionFailedOnTheRefusalNotTheConnectTimeout) {
  test::RefusingPort refusing;
  ClientOptions o;
  o.port = refusing.port();
  o.connect_timeout = 2s;
  auto constructed = std::async(std::launch::async, [&o]() -> std::optional<Error> {
    try {
      Client client(o);
      return std::nullopt;
    } catch (const Error& e) {
      return e;
    }
  });
  // Bounded only so that a hang fails instead of blocking the suite.
  ASSERT_EQ(constructed.wait_for(60s), std::future_status::ready) << "the constructor hung";
  const std::optional<Error> error = constructed.get();
  ASSERT_TRUE(error.has_value()) << "connected to a refusing port";
  EXPECT_EQ(error->code(), errc::connection_failed) << error->what();
  // The refusal itself, not "connect timed out after 2000 ms".
  EXPECT_NE(std::string(error->what()).find("refused"), std::string::npos) << error->what();
}

TEST(Client, ErrorReplyThrowsServerErrorWithTheServerText) {
  RedisServer server;
  Client client(options_for(server));
  client.command("SET", "str", "x");
  try {
    client.command("HGET", "str", "f");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::server_error);
    EXPECT_NE(std::string(e.what()).find("WRONGTYPE"), std::string::npos) << e.what();
  }
  std::error_code ec;
  const std::string_view args[] = {"HGET", "str", "f"};
  Value v = client.command(args, ec);
  EXPECT_EQ(ec, errc::server_error);
  EXPECT_TRUE(v.is_error());
}

TEST(Client, QueueBoundRejectsCommandsPastItWithQueueFull) {
  RedisServer server;
  ClientOptions o = options_for(server);
  o.max_queued = 10;
  Client client(o);
  server.pause();
  std::atomic<int> done{0};
  std::atomic<int> full{0};
  for (int i = 0; i < 25; ++i) {
    client.async_command({"PING"}, [&](std::error_code ec, Value) {
      if (ec == errc::queue_full) ++full;
      ++done;
    });
  }
  server.resume();
  ASSERT_TRUE(wait_for_count(done, 25, 20s));
  EXPECT_EQ(full.load(), 15);
}

TEST(Client, CommandsAfterCloseFailWithClosed) {
  RedisServer server;
  Client client(options_for(server));
  client.close();
  EXPECT_TRUE(client.closed());
  std::error_code ec;
  client.command(std::vector<std::string_view>{"PING"}, ec);
  EXPECT_EQ(ec, errc::closed);
  EXPECT_THROW(client.command("PING"), Error);
  auto f = client.async_command({"PING"}, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  try {
    f.get();
    FAIL();
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), errc::closed);
  }
}

TEST(Client, AsyncCommandWorksWithUseFuture) {
  RedisServer server;
  Client client(options_for(server));
  auto f = client.async_command({"ECHO", "hello"}, asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get().as_string(), "hello");
}

TEST(Client, BlockingCallInsideAHandlerOnTheIoThreadFailsInsteadOfDeadlocking) {
  RedisServer server;
  Client client(options_for(server));
  std::promise<std::error_code> result;
  client.async_command({"PING"}, [&](std::error_code, Value) {
    std::error_code ec;
    client.command(std::vector<std::string_view>{"PING"}, ec);
    result.set_value(ec);
  });
  auto f = result.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), errc::invalid_argument);
}

TEST(Client, SelectsTheDatabaseFromTheUri) {
  RedisServer server;
  Client client(server.uri() + "/3");
  client.command("SET", "db3key", "x");
  EXPECT_EQ(server.cli({"-n", "3", "GET", "db3key"}), "x");
  EXPECT_EQ(server.cli({"-n", "0", "EXISTS", "db3key"}), "0");
}

}  // namespace
}  // namespace distlock
