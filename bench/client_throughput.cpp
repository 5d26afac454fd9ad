// client_throughput: commands/s through ONE distlock::Client from 1, 16 and
// 64 threads, each as a ratio to redis-benchmark with the same concurrency
// against the same server in the same run, without and with -P 16.
//
//   client_throughput --port P [--host 127.0.0.1] [--seconds 3]
//                     [--threads 1,16,64] [--redis-benchmark PATH]
//
// Two operations: PING, and EVALSHA of a small compare-and-delete script.
// Prints a table to stderr and one JSON line per case to stdout.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "distlock/client.hpp"

namespace db = distlock_bench;

namespace {

constexpr const char* kCompareAndDelete =
    "if redis.call('get',KEYS[1])==ARGV[1] then return redis.call('del',KEYS[1]) else return 0 "
    "end";

struct Case {
  std::string op;  // "ping" or "evalsha"
  int threads = 1;
};

// Runs `threads` threads, each sending commands one at a time through the
// shared Client until `seconds` have passed (or a per-thread cap is reached).
// Returns commands per second.
double run_distlock(distlock::Client& client,
                    const Case& c,
                    const std::string& sha,
                    double seconds,
                    std::int64_t cap_per_thread) {
  std::atomic<bool> go{false};
  std::atomic<std::int64_t> total{0};
  std::atomic<int> failures{0};
  std::int64_t deadline = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < c.threads; ++t) {
    threads.emplace_back([&, t] {
      const std::string key = "bench:cad:" + std::to_string(t);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      std::int64_t n = 0;
      try {
        if (c.op == "ping") {
          while (n < cap_per_thread && db::now_ns() < deadline) {
            client.command("PING");
            ++n;
          }
        } else {
          while (n < cap_per_thread && db::now_ns() < deadline) {
            client.command("EVALSHA", sha, 1, key, "v");
            ++n;
          }
        }
      } catch (const std::exception& e) {
        std::cerr << "client_throughput: " << e.what() << "\n";
        failures.fetch_add(1);
      }
      total.fetch_add(n);
    });
  }
  const std::int64_t start = db::now_ns();
  deadline = start + static_cast<std::int64_t>(seconds * 1e9);
  go.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  const double elapsed = static_cast<double>(db::now_ns() - start) / 1e9;
  if (failures.load() != 0) throw std::runtime_error("commands failed during the run");
  return static_cast<double>(total.load()) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const db::Args args(argc, argv, 1);
    if (!args.has("port")) {
      std::cerr << "usage: client_throughput --port P [--host H] [--seconds S] [--threads 1,16,64] "
                   "[--redis-benchmark PATH]\n";
      return 2;
    }
    const std::string host = args.str("host", "127.0.0.1");
    const int port = static_cast<int>(args.num("port", 0));
    const double seconds = args.real("seconds", 3.0);
    const auto thread_counts = args.ints("threads", {1, 16, 64});
    const std::string rb = args.str("redis-benchmark", "redis-benchmark");
    const std::int64_t cap = args.num("max-per-thread", 50'000'000);

    distlock::Client client("redis://" + host + ":" + std::to_string(port));
    const std::string sha = client.command("SCRIPT", "LOAD", kCompareAndDelete).as_string();

    std::fprintf(stderr, "%-8s %7s %12s %12s %12s %8s %8s\n", "op", "threads", "distlock/s", "rb/s",
                 "rb -P16/s", "ratio", "ratioP16");
    for (const std::string op : {"ping", "evalsha"}) {
      for (const int t : thread_counts) {
        const Case c{op, t};
        const double ours = run_distlock(client, c, sha, seconds, cap);
        const std::string extra = op == "ping"
                                      ? std::string("-t ping")
                                      : "-r 100000 EVALSHA " + sha + " 1 " +
                                            db::shell_quote("bench:cad:__rand_int__") + " v";
        const db::RbResult plain = db::redis_benchmark(rb, host, port, t, 1, seconds, ours, extra);
        const db::RbResult piped =
            db::redis_benchmark(rb, host, port, t, 16, seconds, ours * 4, extra);
        if (!plain.ok || !piped.ok) throw std::runtime_error("redis-benchmark failed");
        db::emit(db::JsonLine()
                     .add("bench", "client_throughput")
                     .add("op", op)
                     .add("threads", t)
                     .add("distlock_ops_per_s", ours)
                     .add("redis_benchmark_ops_per_s", plain.rps)
                     .add("redis_benchmark_p16_ops_per_s", piped.rps)
                     .add("ratio_to_redis_benchmark", ours / plain.rps)
                     .add("ratio_to_redis_benchmark_p16", ours / piped.rps));
        std::fprintf(stderr, "%-8s %7d %12.0f %12.0f %12.0f %8.2f %8.2f\n", op.c_str(), t, ours,
                     plain.rps, piped.rps, ours / plain.rps, ours / piped.rps);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "client_throughput: " << e.what() << "\n";
    return 1;
  }
}
