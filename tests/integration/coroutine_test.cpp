// async_command from C++20 coroutines.
#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>

#include "distlock/client.hpp"
#include "distlock/client_async.hpp"
#include "support/redis_server.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::RedisServer;

asio::awaitable<void> set_then_get(Client& client, std::string& got) {
  std::vector<std::string> set{"SET", "co", "routine"};
  co_await client.async_command(std::move(set), asio::use_awaitable);
  std::vector<std::string> get{"GET", "co"};
  Value v = co_await client.async_command(std::move(get), asio::use_awaitable);
  got = v.as_string();
}

TEST(Client, AsyncCommandWorksInACoroutineOnAnotherIoContext) {
  RedisServer server;
  Client client(server.uri());
  asio::io_context io;
  std::string got;
  asio::co_spawn(io, set_then_get(client, got), asio::detached);
  io.run_for(10s);
  EXPECT_EQ(got, "routine");
}

}  // namespace
}  // namespace distlock
