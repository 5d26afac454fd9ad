// sharded_pubsub_bench: Lock pairs per second on a 3+3 Redis Cluster with
// sharded pub/sub (SSUBSCRIBE / SPUBLISH) against classic (SUBSCRIBE /
// PUBLISH, broadcast over the cluster bus), in the same run, rounds
// alternating; and what each costs the nodes that own none of the locks'
// slots (every name lives in shard 0): their CPU seconds per million pairs,
// from INFO cpu before and after each measurement. Starts the cluster itself
// with the test fixture (free 127.0.0.1 ports, stopped by pid).
//
//   sharded_pubsub_bench [--seconds 3] [--rounds 3]
//
// Uncontended: 1 and 16 threads, each on its own name. Contended: 8 threads
// on one name (every unlock wakes a waiter by its message). Never part of CI.
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

namespace {

using Clock = std::chrono::steady_clock;
using distlock::test::RedisCluster;
using distlock::test::RedisServer;

// A name whose slot shard 0 owns (CLUSTER KEYSLOT: before the clock runs).
std::string name_in_shard0(const RedisCluster& cluster, const std::string& prefix, int i) {
  for (int n = 0;; ++n) {
    std::string name = prefix + std::to_string(i) + ":" + std::to_string(n);
    if (cluster.key_slot(name) <= RedisCluster::kShardLastSlot[0]) return name;
  }
}

double cpu_seconds(const RedisServer& node) {
  const std::string info = node.cli({"INFO", "cpu"});
  double total = 0;
  for (const std::string field : {"used_cpu_sys:", "used_cpu_user:"}) {
    const auto at = info.find(field);
    if (at != std::string::npos) total += std::stod(info.substr(at + field.size()));
  }
  return total;
}

// CPU seconds of every node but shard 0's master and replica.
double others_cpu(const RedisCluster& cluster) {
  double total = 0;
  RedisServer* owner = cluster.masters()[0];
  RedisServer* replica = cluster.replica_of(*owner);
  for (RedisServer* node : cluster.nodes()) {
    if (node != owner && node != replica) total += cpu_seconds(*node);
  }
  return total;
}

struct Result {
  double pairs_per_s = 0;
  double others_us_per_pair = 0;  // CPU of the non-owning nodes per pair
};

Result measure(distlock::Client& client,
               const RedisCluster& cluster,
               int threads,
               bool one_name,
               double seconds,
               const std::string& prefix) {
  std::atomic<long> total{0};
  std::atomic<bool> failed{false};
  std::vector<std::string> names;
  for (int t = 0; t < (one_name ? 1 : threads); ++t) {
    names.push_back(name_in_shard0(cluster, prefix, t));
  }
  const double cpu_before = others_cpu(cluster);
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      distlock::Lock lock = client.lock(names[one_name ? 0 : static_cast<std::size_t>(t)]);
      long n = 0;
      try {
        while (Clock::now() < deadline) {
          lock.lock();
          lock.unlock();
          ++n;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "sharded_pubsub_bench: %s\n", e.what());
        failed = true;
      }
      total += n;
    });
  }
  for (auto& th : pool) th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu = others_cpu(cluster) - cpu_before;
  if (failed || total == 0) return {-1, -1};
  return {static_cast<double>(total) / elapsed, cpu * 1e6 / static_cast<double>(total)};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  int rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--seconds") {
      seconds = std::stod(argv[i + 1]);
    } else if (flag == "--rounds") {
      rounds = std::stoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: sharded_pubsub_bench [--seconds S] [--rounds N]\n");
      return 2;
    }
  }
  RedisCluster cluster;
  std::string uri = "redis-cluster://";
  for (auto* m : cluster.masters()) uri += "127.0.0.1:" + std::to_string(m->port()) + ",";
  uri.pop_back();
  distlock::Client classic(uri + "?sharded_pubsub=off");
  distlock::Client sharded(uri + "?sharded_pubsub=on");
  struct Case {
    const char* what;
    int threads;
    bool one_name;
  };
  for (const Case c : {Case{"uncontended", 1, false}, Case{"uncontended", 16, false},
                       Case{"contended", 8, true}}) {
    std::vector<double> cp, sp, cc, sc;
    for (int r = 0; r < rounds; ++r) {
      const std::string prefix =
          std::string(c.what) + std::to_string(c.threads) + ":" + std::to_string(r) + ":";
      const Result a = measure(classic, cluster, c.threads, c.one_name, seconds, prefix + "c:");
      const Result b = measure(sharded, cluster, c.threads, c.one_name, seconds, prefix + "s:");
      cp.push_back(a.pairs_per_s);
      sp.push_back(b.pairs_per_s);
      cc.push_back(a.others_us_per_pair);
      sc.push_back(b.others_us_per_pair);
      std::printf(
          "%s threads=%d round=%d classic_pairs_per_s=%.0f sharded_pairs_per_s=%.0f "
          "classic_other_nodes_us_per_pair=%.2f sharded_other_nodes_us_per_pair=%.2f\n",
          c.what, c.threads, r, a.pairs_per_s, b.pairs_per_s, a.others_us_per_pair,
          b.others_us_per_pair);
      std::fflush(stdout);
    }
    std::printf(
        "%s threads=%d median pairs/s classic=%.0f sharded=%.0f ratio sharded/classic=%.2f; "
        "CPU of the 4 nodes owning none of the slots, us per pair: classic=%.2f sharded=%.2f\n",
        c.what, c.threads, median(cp), median(sp), median(sp) / median(cp), median(cc), median(sc));
  }
  return 0;
}
