// The README's example: one Client per process, a lock per resource.
#include <distlock/distlock.hpp>

#include <cstdio>
#include <mutex>

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    distlock::Client client(uri);  // connects; shared by all threads

    // Thread-owned, reentrant, renewed by the watchdog while held.
    distlock::Lock lock = client.lock("orders:42");
    {
      std::lock_guard guard(lock);  // lock() ... unlock()
      std::puts("holding orders:42");
    }

    // Wait at most 2 s; hold with a fixed 10 s lease (no watchdog).
    if (lock.try_lock_for(std::chrono::seconds(2), std::chrono::seconds(10))) {
      lock.unlock();
    }

    // A handle-owned lease with a fencing token and a lost-lease signal.
    distlock::Lock fenced = client.fenced_lock("nightly-job");
    if (std::optional<distlock::Lease> lease = fenced.try_acquire()) {
      std::printf("token %llu\n", static_cast<unsigned long long>(*lease->fencing_token()));
      if (lease->stop_token().stop_requested()) std::puts("lease lost: stop writing");
    }  // the Lease's destructor releases it
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
}
