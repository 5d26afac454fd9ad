// A lease held with min_replicas_acked = 1 through a Sentinel failover whose
// old master never comes back: with two replicas the one left acknowledges
// the renewals on the new master and the lease lives on; with one replica
// nobody acknowledges them, so they are not believed and the lease is lost
// once it runs out (docs/topologies.md).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "distlock/distlock.hpp"
#include "support/redis_sentinel.hpp"
#include "support/test_helpers.hpp"
#include "topology/sentinel_test_helpers.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;

bool link_up(const RedisServer& replica) {
  return replica.cli({"INFO", "replication"}).find("master_link_status:up") != std::string::npos;
}

// EVALSHA calls `node` has run (INFO commandstats).
long long script_calls(const RedisServer& node) {
  const std::string stats = node.cli({"INFO", "commandstats"});
  const std::string field = "cmdstat_evalsha:calls=";
  const auto at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

// SENTINEL MASTER's reply (one line per key, then its value) as a map.
std::map<std::string, std::string> fields(const std::string& reply) {
  std::map<std::string, std::string> f;
  std::istringstream in(reply);
  std::string key, value;
  while (std::getline(in, key) && std::getline(in, value)) f[key] = value;
  return f;
}

// A Client that acquires only what one replica acknowledged, with a short
// lease (renewed every lease / 3), reconnecting fast.
ClientOptions acking(const RedisSentinelSet& set, std::chrono::milliseconds lease) {
  ClientOptions o = sentinel_options(set);
  o.min_replicas_acked = 1;
  o.replica_ack_timeout = 500ms;
  o.watchdog_timeout = lease;
  o.reconnect_min_delay = 10ms;
  o.reconnect_max_delay = 100ms;
  return o;
}

// A replica just online may take up to its periodic 1 s ACK to acknowledge
// its first write: retry the very first acquire until it is acknowledged.
std::optional<Lease> acquire_acked(Client& client, const std::string& name) {
  std::optional<Lease> lease;
  eventually(
      [&] {
        std::error_code ec;
        lease = client.lock(name).try_acquire(ec);
        return lease.has_value();
      },
      20s);
  return lease;
}

TEST(Sentinel,
     WithOneReplicaAckAndTwoReplicasAHeldLeaseSurvivesAFailoverWhoseOldMasterNeverReturns) {
  RedisSentinelSet set;
  // A second replica. Its lower priority makes the sentinels promote the
  // fixture's replica; this one is then made a replica of the new master.
  RedisServerOptions second_options;
  second_options.config = {{"repl-diskless-sync-delay", "0"},
                           {"replicaof", "127.0.0.1 " + std::to_string(set.master().port())},
                           {"replica-priority", "200"}};
  RedisServer second(second_options);
  ASSERT_TRUE(eventually([&] { return link_up(second); }, 20s));
  // The sentinels learn of it now rather than at their next INFO (10 s).
  for (RedisServer* s : set.sentinels()) s->cli({"SENTINEL", "RESET", set.master_name()});
  ASSERT_TRUE(eventually(
      [&] {
        for (RedisServer* s : set.sentinels()) {
          auto f = fields(s->cli({"SENTINEL", "MASTER", set.master_name()}));
          if (f["flags"] != "master" || f["num-slaves"] != "2" || f["num-other-sentinels"] != "2")
            return false;
        }
        return true;
      },
      20s))
      << set.logs();

  // The test drives the failover: the sentinels must not start their own
  // while the master hangs below.
  for (RedisServer* s : set.sentinels()) {
    ASSERT_EQ(s->cli({"SENTINEL", "SET", set.master_name(), "down-after-milliseconds", "60000"}),
              "OK");
  }

  std::atomic<int> lost{0};
  ClientOptions o = acking(set, 9s);  // renewed every 3 s
  o.command_timeout = 1s;             // a renewal to a hung master fails after 1 s
  o.on_lease_lost = [&](const LeaseLostEvent&) { ++lost; };
  Client holder(o);
  std::optional<Lease> held = acquire_acked(holder, "sentinel:held");
  ASSERT_TRUE(held.has_value());
  const std::string owner = set.master().cli({"HKEYS", "sentinel:held"});
  ASSERT_FALSE(owner.empty());

  // The master hangs: the next renewal goes out to it and fails. The lease
  // must outlive that failure (its believed deadline still stands).
  const auto failed_before = holder.metrics().renewals_failed;
  set.master().pause();
  ASSERT_TRUE(eventually([&] { return holder.metrics().renewals_failed > failed_before; }, 15s));

  set.failover();
  set.replica().kill();  // the old master: it never rejoins
  RedisServer& new_master = set.master();
  ASSERT_TRUE(eventually([&] { return served_port(holder) == new_master.port(); }, 20s))
      << set.logs();
  ASSERT_FALSE(held->stop_token().stop_requested()) << "the lease was dropped: a failed renewal";
  // The second replica now follows the new master and is its only replica.
  ASSERT_TRUE(eventually(
      [&] {
        return link_up(second) &&
               new_master.cli({"INFO", "replication"}).find("connected_slaves:1") !=
                   std::string::npos;
      },
      20s))
      << set.logs();

  // Four renewals on the new master, acknowledged by the second replica, a
  // period (lease / 3) apart: they span a whole lease, so the lease now
  // lives on them alone, not on a renewal acknowledged before the failover.
  const auto before = holder.metrics();
  const long long scripts_before = script_calls(new_master);
  ASSERT_TRUE(
      eventually([&] { return holder.metrics().renewals_ok >= before.renewals_ok + 4; }, 30s))
      << "renewals ok " << holder.metrics().renewals_ok << ", failed "
      << holder.metrics().renewals_failed;
  EXPECT_TRUE(held->valid());
  EXPECT_FALSE(held->stop_token().stop_requested());
  EXPECT_EQ(lost.load(), 0);
  // The key is on the new master with the lease's owner, and lives on the
  // renewals made there.
  EXPECT_EQ(new_master.cli({"HKEYS", "sentinel:held"}), owner);
  EXPECT_GT(std::stoll(new_master.cli({"PTTL", "sentinel:held"})), 0);
  EXPECT_GE(script_calls(new_master), scripts_before + 4) << "the renewals ran there";
  const auto after = holder.metrics();
  std::printf("[sentinel] renewals through the failover: %llu ok, %llu failed\n",
              static_cast<unsigned long long>(after.renewals_ok),
              static_cast<unsigned long long>(after.renewals_failed));
  ::testing::Test::RecordProperty("renewals_failed", std::to_string(after.renewals_failed));

  std::error_code ec;
  held->release(ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(new_master.cli({"EXISTS", "sentinel:held"}), "0");
}

TEST(Sentinel,
     WithOneReplicaAckAndOneReplicaAHeldLeaseIsLostWhenTheOldMasterStaysAwayPastTheLease) {
  RedisSentinelSet set;
  std::atomic<int> reason{-1};
  ClientOptions o = acking(set, 3s);
  o.on_lease_lost = [&](const LeaseLostEvent& e) { reason = static_cast<int>(e.reason); };
  Client holder(o);
  std::optional<Lease> held = acquire_acked(holder, "sentinel:unacked");
  ASSERT_TRUE(held.has_value());

  set.failover();
  set.replica().kill();  // the old master, which would have become the replica
  // The new master has no replica: renewals extend the key there but nobody
  // acknowledges them, so the holder does not believe them and is told once
  // its lease runs out.
  ASSERT_TRUE(wait_for_stop(held->stop_token(), 30s))
      << "renewals nobody acknowledged were believed\n"
      << set.logs();
  EXPECT_FALSE(held->valid());
  EXPECT_TRUE(eventually([&] { return reason.load() >= 0; }, 5s));
  EXPECT_EQ(reason.load(), static_cast<int>(LeaseLostEvent::Reason::expired));
  EXPECT_GT(holder.metrics().renewals_failed, 0u);
}

}  // namespace
}  // namespace distlock::test
