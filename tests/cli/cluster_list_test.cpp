// `distlock list` against a Redis Cluster: SCAN has no key, so the tool scans
// each master itself; one SCAN routed like a key would see a third of the
// names.
#include <gtest/gtest.h>

#include <set>

#include "cli/cli_support.hpp"
#include "cli/json.hpp"
#include "distlock/distlock.hpp"
#include "support/redis_cluster.hpp"

namespace distlock::test {
namespace {

long long calls_of(const RedisServer& node, const std::string& command) {
  const std::string stats = node.cli({"INFO", "commandstats"});
  const std::string field = "cmdstat_" + command + ":calls=";
  const auto at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

class ClusterList : public ::testing::Test, public CliTest {};

TEST_F(ClusterList, ListFindsNamesOnEveryMasterByScanningEachOfThem) {
  RedisCluster cluster;
  const std::string uri =
      "redis-cluster://127.0.0.1:" + std::to_string(cluster.masters().front()->port());
  Client client(uri);
  // One latch in each shard: the first names whose slots fall in its range.
  std::set<std::string> names;
  std::set<int> shards;
  for (int i = 0; shards.size() < RedisCluster::kShards && i < 1000; ++i) {
    const std::string name = "c:" + std::to_string(i);
    const auto slot = client.command("CLUSTER", "KEYSLOT", name).as_integer();
    int shard = 0;
    while (slot > RedisCluster::kShardLastSlot[static_cast<std::size_t>(shard)]) ++shard;
    if (shards.insert(shard).second) names.insert(name);
  }
  ASSERT_EQ(names.size(), static_cast<std::size_t>(RedisCluster::kShards));
  for (const std::string& name : names) client.latch(name).try_set_count(2);
  for (const RedisServer* master : cluster.masters()) master->cli({"CONFIG", "RESETSTAT"});

  const ToolResult r = run({"list", "--uri", uri, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Json list = JsonParser::parse(r.out);
  std::set<std::string> listed;
  for (const Json& e : list.array) listed.insert(e["name"].string);
  EXPECT_EQ(listed, names);
  for (const RedisServer* master : cluster.masters()) {
    EXPECT_GT(calls_of(*master, "scan"), 0) << "master on port " << master->port();
    EXPECT_EQ(calls_of(*master, "keys"), 0);
  }
}

}  // namespace
}  // namespace distlock::test
