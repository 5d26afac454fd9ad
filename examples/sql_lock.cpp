// The same Lock on the database a team already runs: MySQL/MariaDB
// (GET_LOCK) or PostgreSQL (advisory locks); only the URI changes
// (docs/backends.md).
// Usage: distlock_sql_lock postgresql://user:password@host:5432/db
//        distlock_sql_lock mysql://user:password@host:3306/db
#include <distlock/distlock.hpp>

#include <cstdio>
#include <mutex>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s postgresql://...|mysql://...\n", argv[0]);
    return 2;
  }
  try {
    distlock::ClientOptions options = distlock::ClientOptions::from_uri(argv[1]);
    // A lock is held by a connection of its own: at most this many at once.
    options.max_connections = 8;
    // The holder is told the moment its connection ends (KILL,
    // pg_terminate_backend, a restart): stop writing then.
    options.on_lease_lost = [](const distlock::LeaseLostEvent& e) {
      std::fprintf(stderr, "%s: lost\n", e.name.c_str());
    };
    distlock::Client client(options);

    // Fenced: the token is a counter row (table distlock_fence) bumped under
    // the lock, so it strictly increases per lock.
    distlock::Lock lock = client.fenced_lock("orders/42");
    {
      std::lock_guard guard(lock);
      std::printf("token %llu\n", static_cast<unsigned long long>(*lock.fencing_token()));
    }

    // Waiting happens on the server (GET_LOCK's timeout, lock_timeout).
    if (auto lease = lock.try_acquire_for(std::chrono::seconds(2))) {
      if (lease->valid()) std::puts("holding orders/42 as a Lease");
    }

    // What the server cannot do fails at once, before any I/O.
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
