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
//
// Or, to be SIGKILLed by a test while it reads: takes a read hold of the
// read-write lock NAME (watchdog lease of WATCHDOG_MS), prints "held", and
// sleeps until killed.
//
//   distlock_lock_worker read-hold URI NAME WATCHDOG_MS
//
// Or a latch waiter in another process (issue 12): waits up to 60 s for the
// latch NAME to open; exit status 0 when it did, 2 when the wait ran out. It
// re-reads the count only every 10 minutes: only the message wakes it.
//
//   distlock_lock_worker latch-wait URI NAME
//
// Or a rate limiter hammer (issue 12): INCRs NAME:ready, waits for the key
// NAME:go, then for DURATION_MS two threads take permits of the limiter NAME
// one at a time (one with acquire(), one with try_acquire() every 2 ms) and
// RPUSH the server's TIME in microseconds onto NAME:admitted after each.
//
//   distlock_lock_worker rate-hammer URI NAME DURATION_MS
//
// Or, to be SIGKILLed by a test while it holds permits (issue 12): acquires
// N permits of the semaphore NAME for its Client (watchdog lease of
// WATCHDOG_MS), prints "held", and sleeps until killed.
//
//   distlock_lock_worker semaphore-hold URI NAME WATCHDOG_MS N
//
// Or, to be SIGKILLed by a test while it holds (issue 27): takes the lock NAME
// of KIND ("lock", "fenced", "simple", "fenced-simple", "fair", "fenced-fair",
// "write", "fenced-write": a read-write lock's write side) with a lock-delay of
// DELAY_MS (watchdog lease of WATCHDOG_MS), prints "held", and sleeps until
// killed.
//
//   distlock_lock_worker delay-hold URI KIND NAME WATCHDOG_MS DELAY_MS
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "sync/latch_recheck.hpp"

namespace {

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

int read_hold(const char* uri, const char* name, const char* watchdog_ms) {
  auto options = distlock::ClientOptions::from_uri(uri);
  options.watchdog_timeout = std::chrono::milliseconds(std::atoi(watchdog_ms));
  distlock::Client client(options);
  distlock::ReadWriteLock rw = client.read_write_lock(name);
  rw.lock_shared();
  std::printf("held\n");
  std::fflush(stdout);
  for (;;) ::pause();
}

int latch_wait(const char* uri, const char* name) {
  // No periodic re-read within the test's bounds: only the message wakes it.
  distlock::sync::set_latch_recheck(std::chrono::minutes(10));
  distlock::Client client(uri);
  distlock::Latch latch = client.latch(name);
  return latch.wait_for(std::chrono::seconds(60)) ? 0 : 2;
}

// The server's TIME in microseconds, recorded by the server itself.
constexpr const char* kRecordAdmission =
    "local t = redis.call('time') "
    "redis.call('rpush', KEYS[1], string.format('%.0f', t[1] * 1000000 + t[2]))";

int rate_hammer(const char* uri, const std::string& name, long duration_ms) {
  distlock::Client client(uri);
  distlock::RateLimiter limiter = client.rate_limiter(name);
  client.command("INCR", name + ":ready");
  while (client.command("EXISTS", name + ":go").as_integer() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto stop = std::chrono::steady_clock::now() + std::chrono::milliseconds(duration_ms);
  auto record = [&] { client.command("EVAL", kRecordAdmission, 1, name + ":admitted"); };
  std::thread blocking([&] {
    while (std::chrono::steady_clock::now() < stop) {
      limiter.acquire();
      record();
    }
  });
  while (std::chrono::steady_clock::now() < stop) {
    if (limiter.try_acquire()) {
      record();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  blocking.join();
  return 0;
}

int semaphore_hold(char** argv) {
  auto options = distlock::ClientOptions::from_uri(argv[2]);
  options.watchdog_timeout = std::chrono::milliseconds(std::atoi(argv[4]));
  distlock::Client client(options);
  distlock::Semaphore sem = client.semaphore(argv[3]);
  sem.acquire(std::atoll(argv[5]));
  std::printf("held\n");
  std::fflush(stdout);
  for (;;) ::pause();
}

int delay_hold(char** argv) {
  auto options = distlock::ClientOptions::from_uri(argv[2]);
  options.watchdog_timeout = std::chrono::milliseconds(std::atoi(argv[5]));
  distlock::Client client(options);
  const std::string kind = argv[3];
  const distlock::LockOptions lo{std::chrono::milliseconds(std::atoll(argv[6]))};
  distlock::Lock lock = kind == "lock"          ? client.lock(argv[4], lo)
                        : kind == "fenced"      ? client.fenced_lock(argv[4], lo)
                        : kind == "simple"      ? client.simple_lock(argv[4], lo).as_lock()
                        : kind == "fair"        ? client.fair_lock(argv[4], lo)
                        : kind == "fenced-fair" ? client.fenced_fair_lock(argv[4], lo)
                        : kind == "write"       ? client.read_write_lock(argv[4], lo).write_lock()
                        : kind == "fenced-write"
                            ? client.fenced_read_write_lock(argv[4], lo).write_lock()
                            : client.fenced_simple_lock(argv[4], lo).as_lock();
  lock.lock();
  std::printf("held\n");
  std::fflush(stdout);
  for (;;) ::pause();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::string(argv[1]) == "delay-hold") {
    try {
      return delay_hold(argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "delay worker failed: %s\n", e.what());
      return 1;
    }
  }
  if (argc == 5 && std::string(argv[1]) == "fair-wait") {
    try {
      return fair_wait(argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fair waiter failed: %s\n", e.what());
      return 1;
    }
  }
  if (argc == 4 && std::string(argv[1]) == "latch-wait") {
    try {
      return latch_wait(argv[2], argv[3]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "latch waiter failed: %s\n", e.what());
      return 1;
    }
  }
  if (argc == 5 && std::string(argv[1]) == "rate-hammer") {
    try {
      return rate_hammer(argv[2], argv[3], std::atol(argv[4]));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rate hammer failed: %s\n", e.what());
      return 1;
    }
  }
  if (argc == 5 && std::string(argv[1]) == "read-hold") {
    try {
      return read_hold(argv[2], argv[3], argv[4]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lock worker failed: %s\n", e.what());
      return 1;
    }
  }
  if (argc == 6 && std::string(argv[1]) == "semaphore-hold") {
    try {
      return semaphore_hold(argv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "semaphore worker failed: %s\n", e.what());
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
