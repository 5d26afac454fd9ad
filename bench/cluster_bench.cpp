// cluster_bench: uncontended lock/unlock pairs per second through one Client
// on a 3-master + 3-replica Redis Cluster against one standalone server, in
// the same run on the same machine. It starts both
// itself with the test fixtures (free 127.0.0.1 ports, stopped by pid).
//
//   cluster_bench [--seconds 3] [--rounds 3] [--threads 1,64]
//
// Prints one line per measurement and the cluster/standalone ratio of the
// medians. Never part of CI.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "distlock/client.hpp"
#include "distlock/lock.hpp"
#include "support/redis_cluster.hpp"
#include "support/redis_server.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double pairs_per_second(distlock::Client& client,
                        int threads,
                        double seconds,
                        const std::string& prefix) {
  std::atomic<long> total{0};
  std::atomic<bool> failed{false};
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      distlock::Lock lock = client.lock(prefix + std::to_string(t));
      long n = 0;
      try {
        while (Clock::now() < deadline) {
          lock.lock();
          lock.unlock();
          ++n;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "cluster_bench: %s\n", e.what());
        failed = true;
      }
      total += n;
    });
  }
  for (auto& th : pool) th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  return failed ? -1.0 : static_cast<double>(total) / elapsed;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  int rounds = 3;
  std::vector<int> thread_counts{1, 64};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--seconds") {
      seconds = std::stod(argv[i + 1]);
    } else if (flag == "--rounds") {
      rounds = std::stoi(argv[i + 1]);
    } else if (flag == "--threads") {
      thread_counts.clear();
      std::string list = argv[i + 1];
      for (std::size_t at = 0; at < list.size();) {
        const auto comma = list.find(',', at);
        thread_counts.push_back(std::stoi(list.substr(at, comma - at)));
        at = comma == std::string::npos ? list.size() : comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: cluster_bench [--seconds S] [--rounds N] [--threads 1,64]\n");
      return 2;
    }
  }
  distlock::test::RedisServer standalone;
  distlock::test::RedisCluster cluster;
  std::string uri = "redis-cluster://";
  for (auto* m : cluster.masters()) uri += "127.0.0.1:" + std::to_string(m->port()) + ",";
  uri.pop_back();
  distlock::Client one(standalone.uri());
  distlock::Client many(uri);
  for (int threads : thread_counts) {
    std::vector<double> s, c;
    for (int r = 0; r < rounds; ++r) {
      const std::string prefix = "bench:" + std::to_string(threads) + ":" + std::to_string(r) + ":";
      s.push_back(pairs_per_second(one, threads, seconds, prefix));
      c.push_back(pairs_per_second(many, threads, seconds, prefix));
      std::printf("threads=%d round=%d standalone_pairs_per_s=%.0f cluster_pairs_per_s=%.0f\n",
                  threads, r, s.back(), c.back());
      std::fflush(stdout);
    }
    std::printf("threads=%d median standalone=%.0f cluster=%.0f ratio cluster/standalone=%.2f\n",
                threads, median(s), median(c), median(c) / median(s));
  }
  return 0;
}
