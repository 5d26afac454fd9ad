// docs/multi_lock.md's async example: transfers between three warehouses on
// coroutines, each holding the two stock locks it moves between (all or
// nothing) without blocking a thread. A transfer that waits more than 2 s
// gives up; its cancelled acquire leaves no part held.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <distlock/distlock.hpp>
#include <distlock/multi_lock_async.hpp>
#include <string>
#include <variant>

using namespace asio::experimental::awaitable_operators;

asio::awaitable<void> transfer(distlock::Client& client, std::string from, std::string to) {
  distlock::MultiLock both({client.lock("stock:" + from), client.lock("stock:" + to)});
  asio::steady_timer give_up(co_await asio::this_coro::executor, std::chrono::seconds(2));
  // The losing operation of || is cancelled: a cancelled async_lock gives
  // back every part it took before it completes.
  auto won =
      co_await (both.async_lock(asio::use_awaitable) || give_up.async_wait(asio::use_awaitable));
  if (won.index() == 1) {
    std::printf("%s -> %s: busy, skipped\n", from.c_str(), to.c_str());
    co_return;
  }
  distlock::MultiLease held = std::move(std::get<0>(won));
  std::printf("%s -> %s: holding both\n", from.c_str(), to.c_str());
  co_await held.async_release(asio::use_awaitable);  // throws if a part was not confirmed
}

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    asio::io_context io;  // one application thread
    distlock::Client client(uri);
    const char* warehouses[] = {"east", "west", "north"};
    for (int i = 0; i < 6; ++i) {
      asio::co_spawn(io, transfer(client, warehouses[i % 3], warehouses[(i + 1) % 3]),
                     asio::detached);
    }
    io.run();
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
}
