// client_throughput: commands/s through ONE distlock::Client from 1, 16 and
// 64 threads, each as a ratio to redis-benchmark with the same concurrency
// against the same server in the same round, without and with -P 16.
//
//   client_throughput --port P [--host 127.0.0.1] [--seconds 3] [--rounds 3]
//                     [--threads 1,16,64] [--redis-benchmark PATH]
//
// Two operations: PING, and EVALSHA of a small compare-and-delete script.
// Machines drift (other work comes and goes), so every case runs in each of
// --rounds rounds, and within a case the three measurements (distlock,
// redis-benchmark, redis-benchmark -P 16) run back to back in an order that
// rotates from round to round, so none is always first. Each ratio is taken
// within a round. Prints one JSON line per case and round to stdout (with
// "round"; scripts/bench.sh's report takes the medians) and a table of the
// medians over rounds to stderr.
//
// redis-benchmark runs where this process runs (scripts/bench.sh pins both to
// the client core): its figures are what one client core drives, not what the
// server can take.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "args.hpp"
#include "distlock/client.hpp"
#include "json_line.hpp"
#include "latency.hpp"
#include "redis_benchmark.hpp"

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

// One case measured in one round.
struct Measured {
  double ours = 0;
  db::RbResult plain;
  db::RbResult piped;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const db::Args args(argc, argv, 1);
    if (!args.has("port")) {
      std::cerr << "usage: client_throughput --port P [--host H] [--seconds S] [--rounds R] "
                   "[--threads 1,16,64] [--redis-benchmark PATH]\n";
      return 2;
    }
    const std::string host = args.str("host", "127.0.0.1");
    const int port = static_cast<int>(args.num("port", 0));
    const double seconds = args.real("seconds", 3.0);
    const int rounds = static_cast<int>(args.num("rounds", 3));
    const auto thread_counts = args.ints("threads", {1, 16, 64});
    const std::string rb = args.str("redis-benchmark", "redis-benchmark");
    const std::int64_t cap = args.num("max-per-thread", 50'000'000);
    if (rounds < 1) throw std::runtime_error("--rounds must be at least 1");

    distlock::Client client("redis://" + host + ":" + std::to_string(port));
    const std::string sha = client.command("SCRIPT", "LOAD", kCompareAndDelete).as_string();

    std::vector<Case> cases;
    for (const std::string op : {"ping", "evalsha"}) {
      for (const int t : thread_counts) cases.push_back({op, t});
    }
    // Per case (index into `cases`), one entry per round.
    std::vector<std::vector<double>> ours(cases.size()), plain(cases.size()), piped(cases.size()),
        ratio(cases.size()), ratio16(cases.size());
    for (int round = 1; round <= rounds; ++round) {
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        const std::string extra = c.op == "ping"
                                      ? std::string("-t ping")
                                      : "-r 100000 EVALSHA " + sha + " 1 " +
                                            db::shell_quote("bench:cad:__rand_int__") + " v";
        // redis-benchmark calibrates its own run length; the estimate only
        // seeds that (the last figure of this case, or a modest guess).
        const double estimate = ours[i].empty() ? 20000 : ours[i].back();
        Measured m;
        for (int k = 0; k < 3; ++k) {
          switch ((k + round - 1) % 3) {
            case 0:
              m.ours = run_distlock(client, c, sha, seconds, cap);
              break;
            case 1:
              m.plain = db::redis_benchmark(rb, host, port, c.threads, 1, seconds, estimate, extra);
              break;
            default:
              m.piped =
                  db::redis_benchmark(rb, host, port, c.threads, 16, seconds, estimate * 4, extra);
              break;
          }
        }
        if (!m.plain.ok || !m.piped.ok) throw std::runtime_error("redis-benchmark failed");
        ours[i].push_back(m.ours);
        plain[i].push_back(m.plain.rps);
        piped[i].push_back(m.piped.rps);
        ratio[i].push_back(m.ours / m.plain.rps);
        ratio16[i].push_back(m.ours / m.piped.rps);
        db::emit(db::JsonLine()
                     .add("bench", "client_throughput")
                     .add("op", c.op)
                     .add("threads", c.threads)
                     .add("round", round)
                     .add("distlock_ops_per_s", m.ours)
                     .add("redis_benchmark_ops_per_s", m.plain.rps)
                     .add("redis_benchmark_p16_ops_per_s", m.piped.rps)
                     .add("ratio_to_redis_benchmark", m.ours / m.plain.rps)
                     .add("ratio_to_redis_benchmark_p16", m.ours / m.piped.rps));
      }
    }

    std::fprintf(stderr, "medians over %d round(s); ratios taken within each round\n", rounds);
    std::fprintf(stderr, "%-8s %7s %12s %12s %12s %8s %8s\n", "op", "threads", "distlock/s", "rb/s",
                 "rb -P16/s", "ratio", "ratioP16");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      std::fprintf(stderr, "%-8s %7d %12.0f %12.0f %12.0f %8.2f %8.2f\n", cases[i].op.c_str(),
                   cases[i].threads, median(ours[i]), median(plain[i]), median(piped[i]),
                   median(ratio[i]), median(ratio16[i]));
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "client_throughput: " << e.what() << "\n";
    return 1;
  }
}
