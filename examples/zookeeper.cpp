// The same Lock over ZooKeeper: only the URI changes (docs/backends.md).
// Usage: distlock_zookeeper zookeeper://h1:2181,h2:2181,h3:2181/myapp
#include <distlock/distlock.hpp>

#include <cstdio>
#include <mutex>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s zookeeper://host:port[,...][/chroot]\n", argv[0]);
    return 2;
  }
  try {
    distlock::ClientOptions options = distlock::ClientOptions::from_uri(argv[1]);
    // The lock is held by the session: when the connection drops it is first
    // uncertain (suspended), then lost (expired) if no server is back in time.
    options.on_lease_lost = [](const distlock::LeaseLostEvent& e) {
      if (e.reason == distlock::LeaseLostEvent::Reason::suspended) {
        std::fprintf(stderr, "%s: uncertain, pausing writes\n", e.name.c_str());
      } else {
        std::fprintf(stderr, "%s: lost\n", e.name.c_str());
      }
    };
    distlock::Client client(options);

    // Curator's InterProcessMutex node layout under <chroot>/orders/42:
    // Curator clients on the same path take part in the same queue.
    distlock::Lock lock = client.fenced_lock("orders/42");
    {
      std::lock_guard guard(lock);
      // The token is the holder node's czxid: it only grows per name.
      std::printf("token %llu\n", static_cast<unsigned long long>(*lock.fencing_token()));
    }

    // A Lease: valid() is false while the session is suspended, and its
    // stop_token is requested once the session is lost.
    if (auto lease = lock.try_acquire_for(std::chrono::seconds(2))) {
      if (lease->valid()) std::puts("holding orders/42 as a Lease");
    }

    // What ZooKeeper cannot do fails at once, before any I/O.
    try {
      (void)client.semaphore("slots");
    } catch (const distlock::Error& e) {
      std::printf("as documented: %s\n", e.what());
    }
    return 0;
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
}
