// The synchronizers' async forms on coroutines: eight jobs on one
// application thread share 2 permits of a semaphore and a rate of 4 per
// second, and a coordinator waits on a latch until they are all done. No
// thread blocks while a job waits.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <distlock/distlock.hpp>
#include <string>

asio::awaitable<void> job(distlock::Client& client, int i) {
  distlock::RateLimiter rate = client.rate_limiter("example:async:rate");
  distlock::Semaphore slots = client.semaphore("example:async:slots");
  co_await rate.async_acquire(1, asio::use_awaitable);  // sleeps until the server says
  // A Permit of its own, leased for 10 s: given back on destruction.
  distlock::Permit permit =
      co_await slots.async_acquire_permit(1, std::chrono::milliseconds(10000), asio::use_awaitable);
  std::printf("job %d: running\n", i);
  permit.release();
  // A blocking call, briefly: fine on the application's thread (never on
  // the Client's I/O thread, where it is refused).
  client.latch("example:async:done").count_down();
}

asio::awaitable<void> coordinator(distlock::Client& client) {
  const bool all = co_await client.latch("example:async:done")
                       .async_wait_for(std::chrono::seconds(30), asio::use_awaitable);
  std::puts(all ? "all jobs done" : "gave up waiting");
}

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    distlock::Client client(uri);
    client.semaphore("example:async:slots").try_set_permits(2);
    client.rate_limiter("example:async:rate").try_set_rate(4, std::chrono::seconds(1));
    client.latch("example:async:done").try_set_count(8);
    asio::io_context io;  // the one application thread
    for (int i = 0; i < 8; ++i) asio::co_spawn(io, job(client, i), asio::detached);
    asio::co_spawn(io, coordinator(client), asio::detached);
    io.run();
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "async example failed: %s\n", e.what());
    return 1;
  }
}
