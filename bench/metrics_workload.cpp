// A contended lock workload whose only output is the Client's metrics in the
// Prometheus text format: scripts/metrics_plot.sh draws the wait
// and hold histograms of docs/monitoring.md from it.
//
//   metrics_workload --port P [--seconds 10] [--threads 16] [--names 4]
//                    [--hold-max-ms 20]
//
// Each thread, until the time is up: picks one of --names locks at random;
// one attempt in ten is a try_lock (so some end not acquired), the rest
// lock() and wait; holds it a random 0..hold-max-ms, unlocks.
#include <chrono>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "args.hpp"
#include "distlock/distlock.hpp"

int main(int argc, char** argv) {
  const distlock_bench::Args args(argc, argv, 1);
  const auto port = args.num("port", 0);
  if (port <= 0) {
    std::cerr << "usage: metrics_workload --port P [--seconds S] [--threads T] [--names N] "
                 "[--hold-max-ms M]\n";
    return 2;
  }
  const auto seconds = args.num("seconds", 10);
  const auto threads = args.num("threads", 16);
  const auto names = args.num("names", 4);
  const auto hold_max = args.num("hold-max-ms", 20);
  distlock::Client client("redis://127.0.0.1:" + std::to_string(port));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::uniform_int_distribution<std::int64_t> pick(0, names - 1);
      std::uniform_int_distribution<std::int64_t> hold(0, hold_max * 1000);
      std::uniform_int_distribution<int> one_in_ten(0, 9);
      while (std::chrono::steady_clock::now() < deadline) {
        distlock::Lock lock = client.lock("metrics-workload:" + std::to_string(pick(rng)));
        if (one_in_ten(rng) == 0) {
          if (!lock.try_lock()) continue;
        } else {
          lock.lock();
        }
        std::this_thread::sleep_for(std::chrono::microseconds(hold(rng)));
        lock.unlock();
      }
    });
  }
  for (auto& th : pool) th.join();
  std::cout << distlock::prometheus_text(client);
  return 0;
}
