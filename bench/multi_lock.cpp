// multi_lock_bench: lock/unlock pairs per second of a MultiLock of N parts
// (default 4), as a ratio to the reference measured in the same round: the
// same N Locks taken one after the other by hand (lock each in order, unlock
// each in reverse), through the same Client, on the same server.
//
//   multi_lock_bench --port P [--host 127.0.0.1] [--seconds 2] [--rounds 3]
//                    [--parts 4] [--threads 1]
//
// Each thread uses its own names, so nothing is contended: the figure is
// MultiLock's own cost (sorting is done once, at construction; each pair
// adds the local lease checks). Machines drift, so every round measures
// both, in an order that alternates from round to round, and the ratio is
// taken within a round. Prints one JSON line per round to stdout and the
// median ratio to stderr. A benchmark, never a test: nothing gates on it.
#include <algorithm>
#include <atomic>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "args.hpp"
#include "distlock/client.hpp"
#include "distlock/multi_lock.hpp"
#include "json_line.hpp"
#include "latency.hpp"

namespace db = distlock_bench;

namespace {

struct Setup {
  int parts = 4;
  int threads = 1;
  double seconds = 2;
};

// Runs `threads` threads, each repeating pair(thread) for `seconds`.
// Returns pairs per second over all threads.
template <class MakePair>
double measure(const Setup& s, MakePair make_pair) {
  std::atomic<std::int64_t> total{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  const auto start = db::Clock::now();
  const auto end = start + std::chrono::duration<double>(s.seconds);
  for (int t = 0; t < s.threads; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto pair = make_pair(t);
        std::int64_t n = 0;
        while (db::Clock::now() < end) {
          pair();
          ++n;
        }
        total += n;
      } catch (const std::exception& e) {
        std::cerr << "multi_lock_bench: " << e.what() << "\n";
        failed = true;
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failed) throw std::runtime_error("a pair failed");
  const double wall = std::chrono::duration<double>(db::Clock::now() - start).count();
  return static_cast<double>(total.load()) / wall;
}

std::vector<distlock::Lock> locks(distlock::Client& client, const Setup& s, int thread) {
  std::vector<distlock::Lock> out;
  for (int i = 0; i < s.parts; ++i) {
    out.push_back(client.lock("bench:multi:" + std::to_string(thread) + ":" + std::to_string(i)));
  }
  return out;
}

double run_multi(distlock::Client& client, const Setup& s) {
  return measure(s, [&](int t) {
    distlock::MultiLock multi(locks(client, s, t));
    return [multi]() mutable {
      multi.lock();
      multi.unlock();
    };
  });
}

double run_sequential(distlock::Client& client, const Setup& s) {
  return measure(s, [&](int t) {
    return [parts = locks(client, s, t)]() mutable {
      for (auto& p : parts) p.lock();
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) it->unlock();
    };
  });
}

}  // namespace

int main(int argc, char** argv) {
  try {
    db::Args args(argc, argv, 1);
    if (!args.has("port")) {
      std::cerr << "usage: multi_lock_bench --port P [--host H] [--seconds S] [--rounds R] "
                   "[--parts N] [--threads T]\n";
      return 2;
    }
    const std::string host = args.str("host", "127.0.0.1");
    const int port = static_cast<int>(args.num("port", 0));
    Setup s;
    s.parts = static_cast<int>(args.num("parts", 4));
    s.threads = static_cast<int>(args.num("threads", 1));
    s.seconds = args.real("seconds", 2);
    const int rounds = static_cast<int>(args.num("rounds", 3));
    distlock::Client client("redis://" + host + ":" + std::to_string(port));
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) {
      double multi = 0;
      double sequential = 0;
      if (r % 2 == 0) {
        multi = run_multi(client, s);
        sequential = run_sequential(client, s);
      } else {
        sequential = run_sequential(client, s);
        multi = run_multi(client, s);
      }
      ratios.push_back(multi / sequential);
      db::JsonLine line;
      line.add("scenario", "multi_lock")
          .add("round", r)
          .add("parts", s.parts)
          .add("threads", s.threads)
          .add("seconds", s.seconds)
          .add("multi_pairs_per_s", multi)
          .add("sequential_pairs_per_s", sequential)
          .add("ratio_multi_to_sequential", ratios.back());
      db::emit(line);
    }
    std::sort(ratios.begin(), ratios.end());
    std::cerr << "multi-lock of " << s.parts << " parts vs " << s.parts
              << " sequential Locks: median ratio " << ratios[ratios.size() / 2] << " over "
              << rounds << " rounds\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "multi_lock_bench: " << e.what() << "\n";
    return 1;
  }
}
