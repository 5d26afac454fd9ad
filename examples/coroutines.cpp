// A program that runs on coroutines only: no thread blocks to take or give
// back a lease. Each job waits at most 2 s for its lock (an acquire that
// loses the race to the timer is cancelled and leaves nothing behind).
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <distlock/distlock.hpp>
#include <distlock/lock_async.hpp>
#include <string>
#include <variant>

using namespace asio::experimental::awaitable_operators;

asio::awaitable<void> job(distlock::Client& client, std::string name) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer give_up(ex, std::chrono::seconds(2));
  auto won = co_await (client.lock(name).async_acquire(asio::use_awaitable) ||
                       give_up.async_wait(asio::use_awaitable));
  if (won.index() == 1) {
    std::printf("%s: busy, skipped\n", name.c_str());
    co_return;
  }
  distlock::Lease lease = std::move(std::get<0>(won));
  std::printf("%s: held\n", name.c_str());
  co_await lease.async_release(asio::use_awaitable);  // throws if not confirmed
}

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    asio::io_context io;  // one application thread
    distlock::Client client(uri);
    for (int i = 0; i < 8; ++i) {
      asio::co_spawn(io, job(client, "report:" + std::to_string(i % 3)), asio::detached);
    }
    io.run();
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
}
