// Read-write lock: shared acquisitions/s of 16 reader threads on one name,
// against Lock (exclusive) with 16 threads on one name, in the same run.
// Each acquisition is lock + unlock by one thread; prints one JSON line per
// case and the ratio.
//
//   read_write [--uri redis://127.0.0.1:6379] [--threads 16] [--seconds 3]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "args.hpp"
#include "distlock/distlock.hpp"
#include "json_line.hpp"

namespace {

using distlock_bench::Args;
using distlock_bench::JsonLine;

// Runs `one` (one acquisition and release) on `threads` threads for
// `seconds`; returns acquisitions per second.
double rate(int threads, double seconds, const std::function<void()>& one) {
  std::atomic<bool> stop{false};
  std::atomic<long> done{0};
  std::vector<std::thread> workers;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        one();
        ++n;
      }
      done += n;
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return static_cast<double>(done.load()) / took.count();
}

}  // namespace

int main(int argc, char** argv) {
  const Args args(argc, argv, 1);
  const int threads = static_cast<int>(args.num("threads", 16));
  const double seconds = args.real("seconds", 3);
  distlock::Client client(args.str("uri", "redis://127.0.0.1:6379"));
  distlock::Lock lock = client.lock("bench:rw:lock");
  distlock::ReadWriteLock rw = client.read_write_lock("bench:rw:rw");

  const double exclusive = rate(threads, seconds, [&] {
    lock.lock();
    lock.unlock();
  });
  const double shared = rate(threads, seconds, [&] {
    rw.lock_shared();
    rw.unlock_shared();
  });
  std::printf("%s\n", JsonLine()
                          .add("scenario", "read_write")
                          .add("threads", threads)
                          .add("seconds", seconds)
                          .add("lock_exclusive_per_s", exclusive)
                          .add("read_shared_per_s", shared)
                          .add("ratio_shared_vs_lock", shared / exclusive)
                          .str()
                          .c_str());
  return 0;
}
