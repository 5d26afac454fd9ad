// Redlock over independent masters: a job that must run at most once even
// if one or two of the five Redis servers are down, paused or partitioned.
//   distlock_redlock redis://h1:6379 redis://h2:6379 redis://h3:6379 ...
#include <distlock/distlock.hpp>
#include <distlock/lock_async.hpp>

#include <asio/use_future.hpp>

#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> uris(argv + 1, argv + argc);
  if (uris.empty()) uris = {"redis://127.0.0.1:6379"};
  try {
    distlock::RedlockOptions options;
    options.lease = std::chrono::seconds(10);  // extended every ~3.3 s while held
    options.on_lease_lost = [](const distlock::LeaseLostEvent& e) {
      std::fprintf(stderr, "lost '%s': stop working on it\n", e.name.c_str());
    };
    // Never throws for a node that is down: it is a vote against.
    distlock::RedlockGroup group(uris, options);
    std::printf("%zu nodes, majority %zu\n", group.size(), group.quorum());

    // Thread-owned, with std::unique_lock (TimedLockable).
    distlock::RedlockLock lock = group.lock("jobs:rebuild-index");
    std::unique_lock guard(lock, std::chrono::seconds(5));
    if (guard.owns_lock()) {
      std::puts("rebuilding the index");
      // Redlock gives no fencing token: check the lease before each step
      // that matters, and make the steps themselves idempotent.
      if (!lock.lease_valid()) return 1;
    }

    // Handle-owned, with a fixed lease (never extended).
    if (auto lease = group.lock("jobs:report")
                         .try_acquire_for(std::chrono::seconds(1), std::chrono::seconds(30))) {
      std::printf("report lease valid for %lld ms\n",
                  static_cast<long long>(lease->remaining().count()));
    }
    // Async, as a Lock's: the handler gets a Lease (here through a future;
    // a callback or asio::use_awaitable work the same way).
    auto pending =
        group.lock("jobs:compact").async_try_acquire_for(std::chrono::seconds(1), asio::use_future);
    if (std::optional<distlock::Lease> lease = pending.get()) {
      std::printf("compacting, fencing token: %s\n", lease->fencing_token() ? "yes" : "none");
      lease->release();
    }
    // Queries answered by a majority of the nodes.
    std::printf("jobs:compact locked: %s\n", group.lock("jobs:compact").is_locked() ? "yes" : "no");

    // The group counts its own acquires, holds and extensions (no Client):
    // render with prometheus_text(group.metrics()) or serve with MetricsServer.
    const distlock::MetricsSnapshot m = group.metrics();
    std::printf(
        "redlock acquires: %llu\n",
        static_cast<unsigned long long>(m.of(distlock::MetricPrimitive::redlock)
                                            .acquires_of(distlock::AcquireResult::acquired)));
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
}
