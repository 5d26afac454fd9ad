// A read-write lock: many readers of a price list, one writer updating it.
#include <distlock/distlock.hpp>

#include <cstdio>
#include <mutex>
#include <shared_mutex>

int main(int argc, char** argv) {
  const char* uri = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  try {
    distlock::Client client(uri);
    distlock::ReadWriteLock prices = client.fenced_read_write_lock("prices");

    {
      std::shared_lock reading(prices);  // lock_shared(): readers share
      std::puts("reading prices");
    }
    {
      std::unique_lock writing(prices);  // lock(): one writer, no readers
      std::printf("writing prices with token %llu\n",
                  static_cast<unsigned long long>(prices.fencing_token().value_or(0)));
      // Downgrade: read before giving up the write hold, keep reading after.
      prices.lock_shared();
    }
    std::puts("still reading after the write unlock");
    prices.unlock_shared();

    // A reader handle-owned Lease, e.g. for a coroutine or another thread.
    distlock::Lease lease = prices.read_lock().acquire();
    std::printf("read lease valid: %d\n", lease.valid() ? 1 : 0);
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
}
