// The mutual-exclusion checker on a Redis Cluster while a master is
// SIGKILLed and its replica takes over: four worker processes take fenced
// locks whose names live in every shard, through one redis-cluster:// URI
// with min_replicas_acked=1 (an acquire returns only once a replica has it).
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fault/fault_support.hpp"
#include "support/history.hpp"
#include "support/redis_cluster.hpp"
#include "topology/slot.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;
using fault::field;
using fault::Worker;

constexpr int kNames = 6;

int shard_of(const std::string& key) {
  const int slot = topology::key_slot(key);
  for (int s = 0; s < RedisCluster::kShards; ++s) {
    if (slot >= RedisCluster::kShardFirstSlot[s] && slot <= RedisCluster::kShardLastSlot[s]) {
      return s;
    }
  }
  return -1;
}

long long counter(RedisCluster& cluster, int n) {
  const std::string key = "counter:mx:" + std::to_string(n);
  const std::string v = cluster.master_for_slot(topology::key_slot(key)).cli({"GET", key});
  return v.empty() || v.rfind("MOVED", 0) == 0 ? 0 : std::stoll(v);
}

long long total(RedisCluster& cluster) {
  long long sum = 0;
  for (int n = 0; n < kNames; ++n) sum += counter(cluster, n);
  return sum;
}

TEST(ClusterFailover, FourProcessesNeverHoldOneLockTogetherWhileAMasterIsKilledAndReplaced) {
  RedisCluster cluster;
  std::set<int> shards;
  for (int n = 0; n < kNames; ++n) shards.insert(shard_of("mx:" + std::to_string(n)));
  ASSERT_EQ(shards.size(), 3u) << "the names must live in every shard";
  std::string uri = "redis-cluster://";
  for (auto* m : cluster.masters()) uri += "127.0.0.1:" + std::to_string(m->port()) + ",";
  uri.pop_back();
  uri += "?min_replicas_acked=1&replica_ack_timeout_ms=1000";

  const std::string dir = make_temp_dir("distlock-cluster-");
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::filesystem::path> files;
  for (int p = 0; p < 4; ++p) {
    files.push_back(dir + "/worker-" + std::to_string(p) + ".history");
    // 3 threads, kNames names, 10 s watchdog lease (it outlives the 2-3 s
    // failover), 5 s command timeout, until SIGUSR1.
    workers.push_back(std::make_unique<Worker>(std::vector<std::string>{
        DISTLOCK_FAULT_WORKER, "history", uri, std::to_string(p + 1), "3", std::to_string(kNames),
        files.back().string(), "10000", "5000", "0"}));
  }
  auto progressed = [&](long long from, long long by) {
    return fault::eventually([&] { return total(cluster) >= from + by; }, 60s);
  };
  ASSERT_TRUE(progressed(0, 200)) << "the workers made no progress";
  cluster.kill_master(0);
  cluster.wait_for_failover(0);
  // The shard needs a replica again for min_replicas_acked=1 acquires.
  cluster.restart_old_master(0);
  ASSERT_TRUE(progressed(total(cluster), 200)) << "no progress after the failover";

  for (auto& w : workers) w->process().signal(SIGUSR1);
  long ops = 0;
  long errors = 0;
  long lost = 0;
  for (auto& w : workers) {
    const auto line = w->read_line(60s);
    ASSERT_TRUE(line.has_value()) << "a worker did not finish";
    std::printf("[cluster failover] worker: %s\n", line->c_str());
    ops += std::stol(field(*line, "ops"));
    errors += std::stol(field(*line, "errors"));
    lost += std::stol(field(*line, "lost"));
    const auto status = w->process().wait_for_exit(30s);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(*status, 0) << describe_wait_status(*status);
  }
  const auto records = read_history(files);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(ops));
  const auto result = fault::check_and_print("cluster failover", records);
  EXPECT_TRUE(result.ok()) << result.report();
  // Every acquire was on a replica before it returned: the failover lost no
  // lease (errors are acquires refused or cut off during the window).
  EXPECT_EQ(lost, 0);
  std::printf("[cluster failover] %ld holds, %ld errors during the failover, %ld leases lost\n",
              ops, errors, lost);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distlock::test
