// Sentinel (issue 13, item 3) against a real RedisSentinelSet: 1 master,
// 1 replica, 3 sentinels. The Client finds the master through the
// sentinels, follows SENTINEL FAILOVER and a SIGKILL of the master, keeps a
// lease the replica acknowledged and tells the holder of one it did not.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

#include "distlock/distlock.hpp"
#include "support/redis_sentinel.hpp"
#include "support/test_helpers.hpp"
#include "topology/sentinel_test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::RedisSentinelSet;
using test::RedisServer;
using test::sentinel_options;
using test::served_port;
using Clock = std::chrono::steady_clock;

std::string role_through(Client& client) {
  return client.command("ROLE").as_array().at(0).as_string();
}

long long ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

TEST(Sentinel, AClientFromASentinelUriLocksAndUnlocksOnTheMaster) {
  RedisSentinelSet set;
  Client client(sentinel_options(set));
  EXPECT_EQ(served_port(client), set.master().port());
  Lease lease = client.lock("sentinel:basic").acquire();
  EXPECT_TRUE(lease.valid());
  EXPECT_EQ(set.master().cli({"EXISTS", "sentinel:basic"}), "1");
  lease.release();
  EXPECT_EQ(set.master().cli({"EXISTS", "sentinel:basic"}), "0");
}

TEST(Sentinel, ALockHeldThroughSentinelFailoverStaysHeldAndTheClientFollowsTheNewMaster) {
  RedisSentinelSet set;
  Client client(sentinel_options(set));
  Lease held = client.lock("sentinel:through-failover").acquire();

  const auto asked = Clock::now();
  set.failover();  // returns once every sentinel names the new master
  const int new_master = set.master().port();
  ASSERT_TRUE(eventually([&] { return served_port(client) == new_master; }, 20s))
      << "the Client still talks to port " << served_port(client) << "\n"
      << set.logs();
  std::printf("[sentinel] SENTINEL FAILOVER -> Client answers on the new master: %lld ms\n",
              ms_since(asked));
  // The old master stays a writable master for about 11 s, until the
  // sentinels demote it: the Client moved on +switch-master, before that.
  EXPECT_EQ(set.replica().cli({"ROLE"}).substr(0, 6), "master")
      << "the Client followed only once the old master was demoted";
  EXPECT_EQ(role_through(client), "master");
  // The replica had the key (an in-sync replica); the reconnect check,
  // answered before ROLE, found it still ours.
  EXPECT_TRUE(held.valid());
  EXPECT_FALSE(held.stop_token().stop_requested());
  EXPECT_EQ(set.master().cli({"EXISTS", "sentinel:through-failover"}), "1");

  Lease after = client.lock("sentinel:after-failover").acquire();
  EXPECT_EQ(set.master().cli({"EXISTS", "sentinel:after-failover"}), "1");
  after.release();
  EXPECT_EQ(set.master().cli({"EXISTS", "sentinel:after-failover"}), "0");
  held.release();
  EXPECT_EQ(set.master().cli({"EXISTS", "sentinel:through-failover"}), "0");
}

TEST(Sentinel, WhenItsSentinelDiesTheClientWatchesTheNextOneAndStillFollowsAFailover) {
  RedisSentinelSet set;
  Client client(sentinel_options(set));  // watches the first sentinel, which answered
  const int old_master = set.master().port();
  const int new_master = set.replica().port();
  set.sentinels()[0]->kill();
  // A failover the two remaining sentinels run: no data connection drops
  // (the old master is only demoted about 11 s later), so only the watch,
  // now on another sentinel, can tell the Client.
  ASSERT_TRUE(eventually(
      [&] {
        return set.sentinels()[1]->cli({"SENTINEL", "FAILOVER", set.master_name()}) == "OK";
      },
      20s))
      << set.logs();
  ASSERT_TRUE(eventually([&] { return served_port(client) == new_master; }, 20s)) << set.logs();
  EXPECT_EQ(set.master().cli({"ROLE"}).substr(0, 6), "master")
      << "the Client followed only once the old master on port " << old_master << " was demoted";
}

TEST(Sentinel, WithOneReplicaAckALockHeldThroughAMasterKillSurvivesAndStaysExclusive) {
  RedisSentinelSet set;
  ClientOptions acking = sentinel_options(set);
  acking.min_replicas_acked = 1;
  acking.replica_ack_timeout = 2s;
  Client holder(acking);
  Client other(sentinel_options(set));
  // The replica acknowledges when it is online and acking; retry the very
  // first acquire until it is (the fixture waits for the link only).
  std::optional<Lease> held;
  ASSERT_TRUE(eventually(
      [&] {
        std::error_code ec;
        held = holder.fenced_lock("sentinel:acked").try_acquire(ec);
        return held.has_value() && held->valid();
      },
      20s));
  const auto token = held->fencing_token();
  ASSERT_TRUE(token.has_value());

  const auto killed = Clock::now();
  set.kill_master();
  const int new_master = set.master().port();
  ASSERT_TRUE(eventually([&] { return served_port(holder) == new_master; }, 20s)) << set.logs();
  // Includes its reconnect check's WAIT 1, which waits out replica_ack_timeout
  // (2 s) on a master whose only replica was the one killed.
  std::printf("[sentinel] kill -> holder's Client answers on the new master: %lld ms\n",
              ms_since(killed));
  // PING goes after the reconnect check: its reply means the check is in.
  holder.command("PING");
  EXPECT_EQ(set.master().cli({"EXISTS", "sentinel:acked"}), "1") << "the acknowledged key survived";
  EXPECT_TRUE(held->valid());
  EXPECT_FALSE(held->stop_token().stop_requested());
  EXPECT_EQ(held->fencing_token(), token);
  std::error_code ec;
  EXPECT_FALSE(other.fenced_lock("sentinel:acked").try_acquire(ec).has_value()) << ec.message();
  EXPECT_FALSE(ec) << ec.message();

  held->release(ec);
  EXPECT_FALSE(ec) << ec.message();
  // The fencing counter came through the failover as well.
  auto next = other.fenced_lock("sentinel:acked").try_acquire();
  ASSERT_TRUE(next.has_value());
  EXPECT_GT(next->fencing_token(), token);
}

TEST(Sentinel, WithoutReplicaAcksALockLostInAMasterKillIsReportedToItsHolder) {
  RedisSentinelSet set;
  // Recipe A of redis-topologies.md 2.5: cut the replication link and keep
  // it cut, so the next write never reaches the replica.
  RedisServer& old_master = set.master();
  RedisServer& replica = set.replica();
  ASSERT_EQ(replica.cli({"CONFIG", "SET", "masterauth", "no-such-password"}), "OK");
  replica.cli({"CLIENT", "KILL", "TYPE", "master"});
  ASSERT_TRUE(eventually(
      [&] {
        return replica.cli({"INFO", "replication"}).find("master_link_status:down") !=
                   std::string::npos &&
               old_master.cli({"INFO", "replication"}).find("connected_slaves:0") !=
                   std::string::npos;
      },
      20s));

  std::atomic<long long> told_at_ns{0};
  std::atomic<int> reason{-1};
  ClientOptions o = sentinel_options(set);
  o.on_lease_lost = [&](const LeaseLostEvent& e) {
    reason = static_cast<int>(e.reason);
    told_at_ns = Clock::now().time_since_epoch().count();
  };
  Client holder(o);
  Client other(sentinel_options(set));
  Lease held = holder.lock("sentinel:lost").acquire();
  ASSERT_EQ(replica.cli({"EXISTS", "sentinel:lost"}), "0") << "the write must not be replicated";

  const auto killed = Clock::now();
  set.kill_master();
  // The other Client takes the lock on the new master, which never had it.
  std::optional<Lease> taken;
  ASSERT_TRUE(eventually(
      [&] {
        std::error_code ec;
        taken = other.lock("sentinel:lost").try_acquire(ec);
        return taken.has_value();
      },
      30s))
      << set.logs();
  const long long acquired_ms = ms_since(killed);

  // Never a silent double grant: the holder is told, with a reason.
  ASSERT_TRUE(test::wait_for_stop(held.stop_token(), 30s)) << set.logs();
  EXPECT_FALSE(held.valid());
  EXPECT_TRUE(eventually([&] { return reason.load() >= 0; }, 5s));
  EXPECT_EQ(reason.load(), static_cast<int>(LeaseLostEvent::Reason::taken));
  const long long told_ms = (told_at_ns.load() - killed.time_since_epoch().count()) / 1'000'000;
  std::printf(
      "[sentinel] kill -> first acquire on the new master: %lld ms; kill -> holder told: "
      "%lld ms\n",
      acquired_ms, told_ms);
  std::error_code ec;
  held.release(ec);
  EXPECT_EQ(ec, errc::lease_lost);
}

}  // namespace
}  // namespace distlock
