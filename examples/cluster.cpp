// Locks on a Redis Cluster: one Client routes every name to its slot's
// master, follows MOVED/ASK during resharding and finds the promoted replica
// after a failover. Acquires wait for one replica (WAIT), so a lock survives
// the loss of its master.
//   distlock_cluster redis-cluster://h1:7000,h2:7000,h3:7000
#include <distlock/distlock.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  const std::string uri = argc > 1 ? argv[1] : "redis-cluster://127.0.0.1:7000";
  try {
    distlock::ClientOptions options = distlock::ClientOptions::from_uri(uri);
    options.min_replicas_acked = 1;  // an acquire returns once a replica has it
    options.on_lease_lost = [](const distlock::LeaseLostEvent& e) {
      std::fprintf(stderr, "lost '%s' in a failover: stop working on it\n", e.name.c_str());
    };
    distlock::Client client(options);

    // Names in different slots live on different masters; each primitive's
    // keys share one slot, so every call goes to one node.
    for (const char* order : {"order:1", "order:2", "order:3"}) {
      distlock::Lease lease = client.fenced_lock(order).acquire();
      std::printf("%s held with fencing token %llu\n", order,
                  static_cast<unsigned long long>(lease.fencing_token().value_or(0)));
      lease.release();
    }

    // A semaphore and a read-write lock on one hash tag share a slot.
    distlock::Semaphore pool = client.semaphore("{tenant-7}:workers");
    pool.try_set_permits(4);
    distlock::Permit permit = pool.acquire_permit(1);
    auto config = client.read_write_lock("{tenant-7}:config");
    config.read_lock().lock();
    std::puts("reading tenant 7's config with one of its 4 worker permits");
    config.read_lock().unlock();
    permit.release();
  } catch (const distlock::Error& e) {
    std::fprintf(stderr, "distlock: %s\n", e.what());
    return 1;
  }
  return 0;
}
