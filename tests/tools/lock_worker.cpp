// A separate process for multi-process lock tests: THREADS threads each do
// INCREMENTS non-atomic increments (GET, then SET value+1) of COUNTER under
// the distributed lock NAME. Exit status 0 when every increment was done.
//
//   distlock_lock_worker URI NAME COUNTER THREADS INCREMENTS
//
// Or a fair lock's waiter that a test SIGKILLs while it waits in line: its
// Client (watchdog lease WATCHDOG_MS, which is also its place's liveness
// lease) waits for the fair lock NAME; should it get it, it prints
// "acquired" and exits 0.
//
//   distlock_lock_worker fair-wait URI NAME WATCHDOG_MS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"

int fair_wait(char** argv) {
  distlock::ClientOptions o = distlock::ClientOptions::from_uri(argv[2]);
  o.watchdog_timeout = std::chrono::milliseconds(std::atol(argv[4]));
  distlock::Client client(std::move(o));
  distlock::Lock lock = client.fair_lock(argv[3]);
  lock.lock();
  std::printf("acquired\n");
  std::fflush(stdout);
  lock.unlock();
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "fair-wait") {
    try {
      return fair_wait(argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fair waiter failed: %s\n", e.what());
      return 1;
    }
  }
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s URI NAME COUNTER THREADS INCREMENTS\n", argv[0]);
    return 2;
  }
  try {
    distlock::Client client(argv[1]);
    const std::string counter = argv[3];
    const int threads = std::atoi(argv[4]);
    const int increments = std::atoi(argv[5]);
    distlock::Lock lock = client.lock(argv[2]);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (int i = 0; i < increments; ++i) {
          std::unique_lock guard(lock);
          const distlock::Value v = client.command("GET", counter);
          const long long n = v.is_nil() ? 0 : std::stoll(v.as_string());
          client.command("SET", counter, n + 1);
        }
      });
    }
    for (auto& w : workers) w.join();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lock worker failed: %s\n", e.what());
    return 1;
  }
}
