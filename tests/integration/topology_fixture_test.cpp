// Tests of the Cluster and Sentinel test fixtures themselves (issue 13, item
// 6): each starts real redis-server processes (about 2.3-2.5 s per fixture,
// shared/reference/redis-topologies.md), so each test starts exactly one.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "support/redis_cluster.hpp"
#include "support/redis_sentinel.hpp"

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

TEST(ClusterFixture, StartsThreeMastersEachOwningAThirdOfTheSlotsWithOneLinkedReplica) {
  const auto start = Clock::now();
  RedisCluster cluster;
  ::testing::Test::RecordProperty("startup_ms", std::to_string(ms_since(start)));
  const auto masters = cluster.masters();
  ASSERT_EQ(masters.size(), 3u);
  ASSERT_EQ(cluster.replicas().size(), 3u);
  for (std::size_t s = 0; s < masters.size(); ++s) {
    RedisServer& master = *masters[s];
    EXPECT_EQ(&cluster.master_for_slot(RedisCluster::kShardFirstSlot[s]), &master);
    EXPECT_EQ(&cluster.master_for_slot(RedisCluster::kShardLastSlot[s]), &master);
    EXPECT_TRUE(starts_with(master.cli({"ROLE"}), "master"));
    RedisServer* replica = cluster.replica_of(master);
    ASSERT_NE(replica, nullptr);
    const std::string info = replica->cli({"INFO", "replication"});
    EXPECT_TRUE(contains(info, "role:slave")) << info;
    EXPECT_TRUE(contains(info, "master_port:" + std::to_string(master.port()))) << info;
    EXPECT_TRUE(contains(info, "master_link_status:up")) << info;
  }
  for (RedisServer* node : cluster.nodes()) {
    const std::string info = node->cli({"CLUSTER", "INFO"});
    EXPECT_TRUE(contains(info, "cluster_state:ok")) << "port " << node->port() << ": " << info;
    EXPECT_TRUE(contains(info, "cluster_slots_assigned:16384")) << info;
    EXPECT_TRUE(contains(info, "cluster_size:3")) << "3 masters with slots: " << info;
    EXPECT_NE(node->cluster_bus_port(), 0);
    EXPECT_NE(node->cluster_bus_port(), node->port());
  }
}

TEST(ClusterFixture, KeyWrittenThroughItsSlotsMasterIsReadableOnItsReplicaAfterWait) {
  RedisCluster cluster;
  const std::string key = "fixture:cluster:wait";
  RedisServer& master = cluster.master_for_slot(cluster.key_slot(key));
  RedisServer* replica = cluster.replica_of(master);
  ASSERT_NE(replica, nullptr);
  // WAIT counts only its own connection's writes: one session for both.
  EXPECT_EQ(cli_session(master.port(), {{"SET", key, "v"}, {"WAIT", "1", "10000"}}), "OK\n1")
      << "one replica acknowledged the write";
  EXPECT_EQ(cli_session(replica->port(), {{"READONLY"}, {"GET", key}}), "OK\nv");
}

TEST(ClusterFixture, KilledMasterIsReplacedByItsReplicaAndTheClusterIsOkAgain) {
  RedisCluster cluster;
  RedisServer* old_master = cluster.masters()[1];
  RedisServer* replica = cluster.replica_of(*old_master);
  ASSERT_NE(replica, nullptr);
  cluster.kill_master(1);
  EXPECT_FALSE(old_master->running());
  const auto start = Clock::now();
  cluster.wait_for_failover(1);
  ::testing::Test::RecordProperty("failover_ms", std::to_string(ms_since(start)));
  EXPECT_EQ(cluster.masters()[1], replica);
  EXPECT_EQ(cluster.replica_of(*replica), nullptr) << "its old master is down";
  EXPECT_EQ(cluster.replicas().size(), 2u);
  EXPECT_TRUE(starts_with(replica->cli({"ROLE"}), "master"));
  EXPECT_EQ(&cluster.master_for_slot(RedisCluster::kShardFirstSlot[1]), replica);
  for (RedisServer* node : cluster.nodes()) {
    if (node == old_master) continue;
    EXPECT_TRUE(contains(node->cli({"CLUSTER", "INFO"}), "cluster_state:ok"))
        << "port " << node->port();
  }
  const std::string key = "lock:a";  // slot 6035, in shard 1 (5461-10922)
  ASSERT_EQ(&cluster.master_for_slot(cluster.key_slot(key)), replica);
  EXPECT_EQ(replica->cli({"SET", key, "v"}), "OK");
}

TEST(ClusterFixture, RestartedOldMasterRejoinsAsTheReplicaOfThePromotedOne) {
  RedisCluster cluster;
  RedisServer* old_master = cluster.masters()[2];
  RedisServer* promoted = cluster.replica_of(*old_master);
  ASSERT_NE(promoted, nullptr);
  cluster.kill_master(2);
  cluster.wait_for_failover(2);
  const auto start = Clock::now();
  cluster.restart_old_master(2);
  ::testing::Test::RecordProperty("rejoin_ms", std::to_string(ms_since(start)));
  EXPECT_TRUE(old_master->running());
  EXPECT_EQ(cluster.masters()[2], promoted);
  EXPECT_EQ(cluster.replica_of(*promoted), old_master);
  const std::string info = old_master->cli({"INFO", "replication"});
  EXPECT_TRUE(contains(info, "role:slave")) << info;
  EXPECT_TRUE(contains(info, "master_port:" + std::to_string(promoted->port()))) << info;
  EXPECT_TRUE(contains(info, "master_link_status:up")) << info;
  for (RedisServer* node : cluster.nodes()) {
    EXPECT_TRUE(contains(node->cli({"CLUSTER", "INFO"}), "cluster_state:ok"))
        << "port " << node->port();
  }
}

TEST(ClusterFixture, HalfMigratedSlotAnswersAskForAMissingKeyAndMovesWhenFinished) {
  RedisCluster cluster;
  const std::string present = "{fixture:migrate}present";
  const std::string absent = "{fixture:migrate}absent";
  const int slot = cluster.key_slot(present);
  RedisServer& from = cluster.master_for_slot(slot);
  RedisServer& to = *cluster.masters()[from.port() == cluster.masters()[0]->port() ? 1 : 0];
  const std::string target = std::to_string(slot) + " 127.0.0.1:" + std::to_string(to.port());
  ASSERT_EQ(from.cli({"SET", present, "v"}), "OK");

  SlotMigration migration = cluster.begin_migration(slot, from, to);
  EXPECT_TRUE(starts_with(from.cli({"GET", absent}), "ASK " + target));
  EXPECT_EQ(from.cli({"GET", present}), "v") << "a key still on the source is served there";
  EXPECT_EQ(&cluster.master_for_slot(slot), &from) << "the source owns it until SETSLOT NODE";

  migration.finish();
  EXPECT_TRUE(starts_with(from.cli({"GET", present}), "MOVED " + target));
  EXPECT_EQ(to.cli({"GET", present}), "v") << "the key moved with the slot";
  EXPECT_EQ(&cluster.master_for_slot(slot), &to);
}

TEST(SentinelFixture, SentinelsReportTheMasterItsReplicaAndEachOther) {
  const auto start = Clock::now();
  RedisSentinelSet set;
  ::testing::Test::RecordProperty("startup_ms", std::to_string(ms_since(start)));
  EXPECT_EQ(set.current_master_port(), set.master().port());
  EXPECT_TRUE(starts_with(set.master().cli({"ROLE"}), "master"));
  const std::string info = set.replica().cli({"INFO", "replication"});
  EXPECT_TRUE(contains(info, "master_port:" + std::to_string(set.master().port()))) << info;
  EXPECT_TRUE(contains(info, "master_link_status:up")) << info;
  ASSERT_EQ(set.sentinels().size(), 3u);
  for (RedisServer* sentinel : set.sentinels()) {
    EXPECT_EQ(sentinel->cli({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", set.master_name()}),
              "127.0.0.1\n" + std::to_string(set.master().port()));
    EXPECT_TRUE(starts_with(sentinel->cli({"SENTINEL", "CKQUORUM", set.master_name()}),
                            "OK 3 usable Sentinels"));
  }
}

TEST(SentinelFixture, FailoverSwapsMasterAndReplica) {
  RedisSentinelSet set;
  RedisServer* old_master = &set.master();
  RedisServer* old_replica = &set.replica();
  const auto start = Clock::now();
  set.failover();
  ::testing::Test::RecordProperty("failover_ms", std::to_string(ms_since(start)));
  EXPECT_EQ(&set.master(), old_replica);
  EXPECT_EQ(&set.replica(), old_master);
  EXPECT_TRUE(starts_with(old_replica->cli({"ROLE"}), "master"));
  for (RedisServer* sentinel : set.sentinels()) {
    EXPECT_EQ(sentinel->cli({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", set.master_name()}),
              "127.0.0.1\n" + std::to_string(old_replica->port()));
  }
  set.reattach_old_master();
  const std::string info = old_master->cli({"INFO", "replication"});
  EXPECT_TRUE(contains(info, "role:slave")) << info;
  EXPECT_TRUE(contains(info, "master_port:" + std::to_string(old_replica->port()))) << info;
  EXPECT_TRUE(contains(info, "master_link_status:up")) << info;
}

TEST(SentinelFixture, KilledMasterIsReplacedByTheReplicaTheSentinelsPromote) {
  RedisSentinelSet set;
  RedisServer* old_master = &set.master();
  RedisServer* old_replica = &set.replica();
  const auto start = Clock::now();
  set.kill_master();
  ::testing::Test::RecordProperty("failover_ms", std::to_string(ms_since(start)));
  EXPECT_FALSE(old_master->running());
  EXPECT_EQ(&set.master(), old_replica);
  EXPECT_EQ(set.current_master_port(), old_replica->port());
  EXPECT_TRUE(starts_with(old_replica->cli({"ROLE"}), "master"));
  EXPECT_EQ(old_replica->cli({"SET", "fixture:sentinel:after-kill", "v"}), "OK");
}

}  // namespace
}  // namespace distlock::test
