// What a call does under Cluster when a node refuses it for now (CLUSTERDOWN,
// TRYAGAIN: retried with backoff within command_timeout) and when two masters
// keep redirecting it to each other (at most 5 redirections, then the last
// MOVED reply as the call's error).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/poll_until.hpp"
#include "support/redis_cluster.hpp"
#include "topology/cluster_test_helpers.hpp"
#include "topology/slot.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Makes every node forget slot 0's owner, so with full coverage required the
// cluster is down and every node answers CLUSTERDOWN; returns once `node`
// says so.
void take_the_cluster_down(RedisCluster& cluster, const RedisServer& node) {
  for (auto* n : cluster.nodes()) n->cli({"CLUSTER", "DELSLOTS", "0"});
  ASSERT_TRUE(poll_until(
      [&] {
        return node.cli({"CLUSTER", "INFO"}).find("cluster_state:fail") != std::string::npos;
      },
      Clock::now() + 10s));
}

// The outcome of an acquire run on another thread.
struct Attempt {
  std::optional<Lease> lease;
  std::error_code code;
  std::string what;
};
Attempt try_acquiring(Lock& lock) {
  Attempt a;
  try {
    a.lease = lock.try_acquire();
  } catch (const Error& e) {
    a.code = e.code();
    a.what = e.what();
  }
  return a;
}

TEST(Cluster, ACallRefusedWithClusterDownIsRetriedWithBackoffAndSucceedsOnceTheClusterIsUp) {
  RedisCluster cluster;
  auto options = cluster_options(cluster);
  options.command_timeout = 30s;  // the retries' budget: far past the repair below
  Client client(options);
  auto lock = client.lock(name_in_shard(1, "down-"));
  RedisServer& owner = *cluster.masters()[1];
  take_the_cluster_down(cluster, owner);
  const long long refused_before = stat(owner, "errorstats", "errorstat_CLUSTERDOWN:");

  auto attempt = std::async(std::launch::async, [&] { return try_acquiring(lock); });
  // Refused, and sent again after the backoff, more than once.
  ASSERT_TRUE(poll_until(
      [&] { return stat(owner, "errorstats", "errorstat_CLUSTERDOWN:") >= refused_before + 3; },
      Clock::now() + 20s));
  ASSERT_EQ(attempt.wait_for(0s), std::future_status::timeout)
      << "the call ended while the cluster was still down: " << attempt.get().what;

  cluster.masters()[0]->cli({"CLUSTER", "ADDSLOTS", "0"});
  ASSERT_EQ(attempt.wait_for(30s), std::future_status::ready);
  Attempt done = attempt.get();
  ASSERT_FALSE(done.code) << done.what;
  ASSERT_TRUE(done.lease.has_value());
  EXPECT_TRUE(done.lease->valid());
  EXPECT_EQ(owner.cli({"EXISTS", lock.name()}), "1");
  done.lease->release();
}

TEST(Cluster, ACallStillRefusedWithClusterDownWhenCommandTimeoutRunsOutFailsWithTheServersError) {
  RedisCluster cluster;
  auto options = cluster_options(cluster);
  options.command_timeout = 1s;
  Client client(options);
  auto lock = client.lock(name_in_shard(1, "stays-down-"));
  RedisServer& owner = *cluster.masters()[1];
  take_the_cluster_down(cluster, owner);
  const long long refused_before = stat(owner, "errorstats", "errorstat_CLUSTERDOWN:");

  auto attempt = std::async(std::launch::async, [&] { return try_acquiring(lock); });
  const bool ended = attempt.wait_for(30s) == std::future_status::ready;
  // Up again either way, so a call that never gives up can end.
  cluster.masters()[0]->cli({"CLUSTER", "ADDSLOTS", "0"});
  ASSERT_TRUE(ended) << "the call kept retrying past command_timeout";
  Attempt done = attempt.get();
  EXPECT_FALSE(done.lease.has_value());
  EXPECT_EQ(done.code, make_error_code(errc::server_error)) << done.what;
  EXPECT_NE(done.what.find("CLUSTERDOWN"), std::string::npos) << done.what;
  // It was retried before giving up.
  const long long refusals = stat(owner, "errorstats", "errorstat_CLUSTERDOWN:") - refused_before;
  EXPECT_GT(refusals, 1);
  ::testing::Test::RecordProperty("clusterdown_refusals", std::to_string(refusals));
}

TEST(Cluster,
     AMultiKeyCommandRefusedWithTryAgainDuringAMigrationIsRetriedAndSucceedsOnceTheKeysMoved) {
  RedisCluster cluster;
  auto options = cluster_options(cluster);
  options.command_timeout = 30s;  // the retries' budget: far past the move below
  Client client(options);
  client.command("SET", "{again}a", "1");
  client.command("SET", "{again}b", "2");
  const int slot = topology::key_slot("{again}a");
  RedisServer& from = cluster.master_for_slot(slot);
  RedisServer* to = nullptr;
  for (auto* m : cluster.masters()) {
    if (m != &from) to = m;
  }
  auto migration = cluster.begin_migration(slot, from, *to);
  // One key on each side: neither node may serve MGET of both (TRYAGAIN).
  ASSERT_EQ(from.cli({"MIGRATE", "127.0.0.1", std::to_string(to->port()), "", "0", "5000", "KEYS",
                      "{again}b"}),
            "OK");
  auto refusals = [&] {
    return stat(from, "errorstats", "errorstat_TRYAGAIN:") +
           stat(*to, "errorstats", "errorstat_TRYAGAIN:");
  };
  const long long refused_before = refusals();

  auto reply = std::async(std::launch::async, [&] {
    std::error_code ec;
    const std::string_view args[] = {"MGET", "{again}a", "{again}b"};
    Value v = client.command(args, ec);
    return std::make_pair(ec, v);
  });
  // More refusals than the redirection limit (5): TRYAGAINs are bounded by
  // command_timeout only, so the ASK that ends the migration must still be
  // followed after them.
  ASSERT_TRUE(poll_until([&] { return refusals() >= refused_before + 6; }, Clock::now() + 20s));
  ASSERT_EQ(reply.wait_for(0s), std::future_status::timeout)
      << "the call ended while the keys were split";

  migration.move_keys();  // both keys on the target: ASK, then served there
  ASSERT_EQ(reply.wait_for(30s), std::future_status::ready);
  const auto [ec, value] = reply.get();
  ASSERT_FALSE(ec) << ec.message() << " " << (value.is_error() ? value.as_string() : "");
  ASSERT_TRUE(value.is_array());
  ASSERT_EQ(value.as_array().size(), 2u);
  EXPECT_EQ(value.as_array()[0].as_string(), "1");
  EXPECT_EQ(value.as_array()[1].as_string(), "2");
  migration.finish();
}

TEST(Cluster, ACallBouncedBetweenTwoMastersThatNameEachOtherFailsAfterFiveRedirections) {
  RedisCluster cluster;
  Client client(cluster_options(cluster));
  auto lock = client.lock(name_in_shard(1, "bounced-"));
  const int slot = topology::key_slot(lock.name());
  RedisServer& a = *cluster.masters()[1];
  RedisServer& b = *cluster.masters()[2];
  const std::string a_id = a.cli({"CLUSTER", "MYID"});
  const std::string b_id = b.cli({"CLUSTER", "MYID"});
  // a gives the slot to b; b still believes a has it (nobody claims it now,
  // so the cluster keeps both views): each answers MOVED to the other.
  ASSERT_EQ(a.cli({"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", b_id}), "OK");
  const std::string to_b =
      "MOVED " + std::to_string(slot) + " 127.0.0.1:" + std::to_string(b.port());
  const std::string to_a =
      "MOVED " + std::to_string(slot) + " 127.0.0.1:" + std::to_string(a.port());
  // (redis-cli ends an error reply with an empty line.)
  ASSERT_EQ(a.cli({"EXISTS", lock.name()}).rfind(to_b, 0), 0u);
  ASSERT_EQ(b.cli({"EXISTS", lock.name()}).rfind(to_a, 0), 0u);
  auto moved = [&] {
    return stat(a, "errorstats", "errorstat_MOVED:") + stat(b, "errorstats", "errorstat_MOVED:");
  };
  const long long moved_before = moved();

  auto attempt = std::async(std::launch::async, [&] { return try_acquiring(lock); });
  const bool ended = attempt.wait_for(30s) == std::future_status::ready;
  // Give the slot back either way, so a call that still bounces can end.
  a.cli({"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", a_id});
  ASSERT_TRUE(ended) << "the call kept bouncing";
  Attempt done = attempt.get();
  EXPECT_FALSE(done.lease.has_value());
  EXPECT_EQ(done.code, make_error_code(errc::server_error)) << done.what;
  EXPECT_NE(done.what.find("MOVED " + std::to_string(slot)), std::string::npos) << done.what;
  // The first answer and 5 redirections, each answered MOVED.
  EXPECT_EQ(moved() - moved_before, 6);
}

}  // namespace
}  // namespace distlock::test
