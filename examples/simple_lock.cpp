// The SET NX lock that node redlock, redsync and redis-py's Lock speak: a job
// that services in other languages must not run at the same time.
#include <distlock/distlock.hpp>

#include <cstdio>
#include <mutex>

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    distlock::Client client(uri);

    // Key "reports:nightly" = a fresh random token, PX = the watchdog lease,
    // renewed while held. A node or Python service locking the same key
    // with redlock or redis-py waits for us, and we for it.
    distlock::SimpleLock lock = client.simple_lock("reports:nightly");
    if (lock.try_lock_for(std::chrono::seconds(5))) {
      std::unique_lock guard(lock, std::adopt_lock);
      std::puts("running the nightly report");
      // Not reentrant: the holder's try_lock is false (lock() would throw).
      if (!lock.try_lock()) std::puts("already held by this thread");
    }

    // A handle-owned lease with a fixed 10 s lease and a fencing token.
    distlock::SimpleLock fenced = client.fenced_simple_lock("reports:weekly");
    if (std::optional<distlock::Lease> lease =
            fenced.try_acquire_for(std::chrono::seconds(1), std::chrono::seconds(10))) {
      distlock::fenced_set(client, "reports:weekly:state", "started", *lease->fencing_token());
    }

    // Lock-delay (docs/lock.md): should this holder die or stall past its
    // lease without releasing, nobody gets the lock for 15 s after the lease
    // ends, so a stalled holder notices its loss before a successor starts.
    distlock::SimpleLock exporter =
        client.simple_lock("reports:export", distlock::LockOptions{std::chrono::seconds(15)});
    if (exporter.try_lock()) {
      std::unique_lock guard(exporter, std::adopt_lock);
      std::puts("exporting");
    }
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
}
