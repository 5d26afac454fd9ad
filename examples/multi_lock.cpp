// docs/multi_lock.md's example: move stock between two warehouses, each
// guarded by its own lock (here on two Clients, which may be two servers),
// holding both or neither.
#include <distlock/distlock.hpp>

#include <chrono>
#include <cstdio>
#include <mutex>

int main(int argc, char** argv) {
  const char* uri_a = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
  const char* uri_b = argc > 2 ? argv[2] : uri_a;
  try {
    distlock::Client east(uri_a);
    distlock::Client west(uri_b);

    // Listed in any order: every MultiLock takes its parts in one canonical
    // order (name, then server), so two transfers in opposite directions
    // cannot deadlock.
    distlock::MultiLock both({west.lock("stock:west"), east.lock("stock:east")});
    {
      std::scoped_lock guard(both);  // lock() ... unlock(): both or neither
      std::puts("holding stock:east and stock:west");
    }

    // Wait at most 2 s for all of them; each part with a fixed 10 s lease.
    if (both.try_lock_for(std::chrono::seconds(2), std::chrono::seconds(10))) {
      std::error_code ec;
      both.unlock(ec);  // releases every part even if one fails; reports the first failure
      if (ec) std::printf("a part was not released cleanly: %s\n", ec.message().c_str());
    } else {
      std::puts("busy: nothing was taken");
    }
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
}
