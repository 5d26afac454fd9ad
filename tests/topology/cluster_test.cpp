// The Client on a real Redis Cluster (3 masters + 3 replicas, test::RedisCluster):
// routing by slot, pub/sub across nodes, the watchdog's per-slot batches, a
// live slot migration, a master killed and replaced, and bad seeds.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/poll_until.hpp"
#include "support/redis_cluster.hpp"
#include "support/refusing_port.hpp"
#include "topology/cluster_test_helpers.hpp"
#include "topology/slot.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(Cluster, EveryPrimitiveWorksOnNamesInEveryMastersSlotsThroughOneClient) {
  RedisCluster cluster;
  Client client(cluster_uri(cluster));
  for (int shard = 0; shard < RedisCluster::kShards; ++shard) {
    const std::string n = name_in_shard(shard, "prim-");
    SCOPED_TRACE("shard " + std::to_string(shard) + " name " + n);
    auto lock = client.lock(n + "-lock");
    auto lease = lock.acquire();
    EXPECT_TRUE(lease.valid());
    lease.release();

    auto fenced = client.fenced_lock(name_in_shard(shard, "fenced-"));
    auto f1 = fenced.acquire();
    const auto t1 = f1.fencing_token();
    f1.release();
    auto f2 = fenced.acquire();
    ASSERT_TRUE(t1 && f2.fencing_token());
    EXPECT_LT(*t1, *f2.fencing_token());
    f2.release();

    auto fair = client.fair_lock(name_in_shard(shard, "fair-"));
    fair.lock();
    fair.unlock();

    auto rw = client.read_write_lock(name_in_shard(shard, "rw-"));
    rw.read_lock().lock();
    rw.read_lock().unlock();
    rw.write_lock().lock();
    rw.write_lock().unlock();

    auto sem = client.semaphore(name_in_shard(shard, "sem-"));
    ASSERT_TRUE(sem.try_set_permits(2));
    EXPECT_TRUE(sem.try_acquire(2));
    EXPECT_FALSE(sem.try_acquire(1));
    sem.release(2);

    auto latch = client.latch(name_in_shard(shard, "latch-"));
    ASSERT_TRUE(latch.try_set_count(1));
    latch.count_down();
    latch.wait();

    auto limiter = client.rate_limiter(name_in_shard(shard, "rate-"));
    ASSERT_TRUE(limiter.try_set_rate(1, 60s));
    EXPECT_TRUE(limiter.try_acquire());
    EXPECT_FALSE(limiter.try_acquire());
  }
  // Each master ran scripts: the calls went to the slots' owners, not to one node.
  for (auto* master : cluster.masters()) {
    EXPECT_GT(stat(*master, "commandstats", "cmdstat_evalsha:"), 0) << master->port();
  }
}

// Classic pub/sub (the sharded form: cluster_sharded_pubsub_test.cpp).
TEST(Cluster, AWaiterIsWokenByAnUnlockWhoseMessageIsPublishedOnAnotherMaster) {
  RedisCluster cluster;
  auto holding = classic_options(cluster);
  // The holder's key lives 10 min: a waiter that missed the message would
  // sleep on that TTL, far past the test's bound below, and fail.
  holding.watchdog_timeout = 600s;
  Client holder(holding);
  Client waiter(classic_options(cluster));
  // Names in every shard: whichever node carries the waiter's subscription,
  // at least two of them publish their unlock on another node.
  for (int shard = 0; shard < RedisCluster::kShards; ++shard) {
    SCOPED_TRACE("shard " + std::to_string(shard));
    auto lock = holder.lock(name_in_shard(shard, "wake-"));
    auto lease = lock.acquire();
    RedisServer& owner = *cluster.masters()[static_cast<std::size_t>(shard)];
    const long long attempts_before = stat(owner, "commandstats", "cmdstat_evalsha:");
    auto other = waiter.lock(lock.name());
    auto got = std::async(std::launch::async, [&]() -> std::optional<Lease> {
      try {
        return other.try_acquire_for(10min);
      } catch (const Error&) {
        return std::nullopt;  // closed by `closer` when never woken
      }
    });
    const CloseIfStillWaiting closer(waiter, got);
    // Settled: subscribed on some node, and its attempt after subscribing
    // (the second) is made; from then on only the message can wake it.
    ASSERT_TRUE(poll_until(
        [&] {
          long long subscribed = 0;
          for (auto* node : cluster.nodes())
            subscribed += subscribers(*node, lock_channel(lock.name()));
          return subscribed > 0 &&
                 stat(owner, "commandstats", "cmdstat_evalsha:") >= attempts_before + 2;
        },
        Clock::now() + 10s));
    lease.release();
    // Bounded far below both fallbacks (the holder's TTL and the waiter's
    // own deadline, 10 min each): only the message can end the wait in time.
    const bool woken = got.wait_for(25s) == std::future_status::ready;
    ASSERT_TRUE(woken) << "the unlock message never woke the waiter";
    auto second = got.get();
    ASSERT_TRUE(second.has_value());
    second->release();
  }
}

TEST(Cluster, WatchdogRenewsLeasesInEverySlotWithoutEverSendingACrossSlotBatch) {
  RedisCluster cluster;
  auto options = cluster_options(cluster);
  options.watchdog_timeout = 300ms;  // renewals every 100 ms
  Client client(options);
  std::vector<Lease> leases;
  for (int i = 0; i < 60; ++i) leases.push_back(client.lock("many-" + std::to_string(i)).acquire());
  std::set<int> shards;
  for (int i = 0; i < 60; ++i)
    shards.insert(shard_of_slot(topology::key_slot("many-" + std::to_string(i))));
  ASSERT_EQ(shards.size(), 3u);
  // Many renewal rounds, each batching several leases of one node.
  const auto renewals_before = stat(*cluster.masters()[0], "commandstats", "cmdstat_evalsha:");
  ASSERT_TRUE(poll_until(
      [&] {
        return stat(*cluster.masters()[0], "commandstats", "cmdstat_evalsha:") >
               renewals_before + 100;
      },
      Clock::now() + 30s));
  for (auto& l : leases) EXPECT_TRUE(l.valid());
  for (auto* node : cluster.masters()) {
    EXPECT_EQ(stat(*node, "errorstats", "errorstat_CROSSSLOT:"), 0) << node->port();
  }
  for (auto& l : leases) l.release();
}

TEST(Cluster,
     LocksAreTakenRenewedAndExcludedThroughALiveSlotMigrationWithoutAnErrorReachingTheUser) {
  RedisCluster cluster;
  const int slot = topology::key_slot("{mig}");
  RedisServer& from = cluster.master_for_slot(slot);
  RedisServer* to = nullptr;
  for (auto* m : cluster.masters()) {
    if (m != &from) to = m;
  }
  auto options = cluster_options(cluster);
  options.watchdog_timeout = 300ms;  // renewals every 100 ms, all through the move
  std::atomic<int> lost{0};
  options.on_lease_lost = [&](const LeaseLostEvent&) { ++lost; };
  Client a(options);
  Client b(options);
  auto held = a.lock("{mig}held").acquire();

  // Client b takes and releases other locks of the slot all the time.
  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  std::string churn_error;
  std::jthread churn([&] {
    try {
      for (int i = 0; !stop; ++i) {
        auto lease = b.lock("{mig}churn" + std::to_string(i % 5)).acquire();
        lease.release();
        ++rounds;
      }
    } catch (const std::exception& e) {
      churn_error = e.what();
    }
  });
  struct StopOnExit {
    std::atomic<bool>& stop;
    ~StopOnExit() { stop = true; }
  } stop_on_exit{stop};
  auto wait_rounds = [&](int more) {
    const int target = rounds + more;
    return poll_until([&] { return rounds >= target || !churn_error.empty(); }, Clock::now() + 30s);
  };

  ASSERT_TRUE(wait_rounds(20));
  auto migration = cluster.begin_migration(slot, from, *to);
  ASSERT_TRUE(wait_rounds(20));  // new keys of the slot: ASK to the target
  EXPECT_FALSE(b.lock("{mig}held").try_lock());
  auto fresh = b.lock("{mig}fresh").acquire();  // absent on the source: made on the target
  // Not on the source (it answers ASK for an absent key of the slot).
  EXPECT_EQ(from.cli({"EXISTS", "{mig}fresh"}).rfind("ASK ", 0), 0u);
  migration.move_keys();  // the held lock's key now lives on the target: ASK for it
  ASSERT_TRUE(wait_rounds(20));
  EXPECT_FALSE(b.lock("{mig}held").try_lock());
  migration.finish();  // MOVED from the source from now on
  ASSERT_TRUE(wait_rounds(20));
  stop = true;
  churn.join();
  EXPECT_EQ(churn_error, "");
  EXPECT_FALSE(b.lock("{mig}held").try_lock());
  EXPECT_TRUE(held.valid());
  EXPECT_TRUE(fresh.valid());
  EXPECT_EQ(lost, 0);
  // The held lease was renewed on the target: its key is there with a live TTL.
  EXPECT_EQ(to->cli({"EXISTS", "{mig}held"}), "1");
  held.release();
  fresh.release();
  auto after = b.lock("{mig}held").try_acquire();
  EXPECT_TRUE(after.has_value());
}

// Recipe A of shared/reference/redis-topologies.md 2.5: the replica can no
// longer authenticate to its master, so later writes never reach it.
void cut_replication(RedisServer& master, RedisServer& replica) {
  replica.cli({"CONFIG", "SET", "masterauth", "no-such-password"});
  replica.cli({"CLIENT", "KILL", "TYPE", "master"});
  ASSERT_TRUE(poll_until(
      [&] {
        return master.cli({"INFO", "replication"}).find("connected_slaves:0") != std::string::npos;
      },
      Clock::now() + 10s));
}

TEST(Cluster, AKilledMastersReplicaTakesOverSurvivingLeasesStayValidAndTheLostOneIsReported) {
  RedisCluster cluster;
  RedisServer& master = *cluster.masters()[0];
  RedisServer& replica = *cluster.replica_of(master);
  auto acked = cluster_options(cluster);
  acked.watchdog_timeout = 10s;  // the lease outlives the failover (2.1-2.7 s)
  acked.min_replicas_acked = 1;
  acked.replica_ack_timeout = 1000ms;
  auto plain = acked;
  plain.min_replicas_acked = 0;
  Client survivor_client(acked);
  Client lost_client(plain);
  Client other(plain);

  auto survivor = survivor_client.lock(name_in_shard(0, "survivor-")).acquire();  // replicated
  auto elsewhere = survivor_client.lock(name_in_shard(1, "elsewhere-")).acquire();
  cut_replication(master, replica);
  auto doomed = lost_client.lock(name_in_shard(0, "doomed-")).acquire();  // master only
  std::promise<void> told;
  std::stop_callback on_lost(doomed.stop_token(), [&] { told.set_value(); });

  const auto killed = Clock::now();
  cluster.kill_master(0);
  // The holder of the key the failover lost is told (the first renewal on
  // the promoted replica finds the key gone).
  ASSERT_EQ(told.get_future().wait_for(60s), std::future_status::ready);
  const auto told_after = Clock::now() - killed;
  EXPECT_FALSE(doomed.valid());
  // A lock in the failed shard can be taken again once the replica serves
  // it (until then an attempt may fail with a clear error, as with a server
  // that is down: connection_lost, timeout or CLUSTERDOWN after retries).
  auto after = other.lock(name_in_shard(0, "after-"));
  std::optional<Lease> first;
  std::vector<std::string> errors;
  ASSERT_TRUE(poll_until(
      [&] {
        std::error_code ec;
        first = after.try_acquire_for(1s, ec);
        if (ec) errors.push_back(ec.message());
        return first.has_value();
      },
      Clock::now() + 60s))
      << errors.size() << " errors, the last: " << (errors.empty() ? "" : errors.back());
  ::testing::Test::RecordProperty("errors_before_first_acquire", std::to_string(errors.size()));
  const auto acquired_after = Clock::now() - killed;
  cluster.wait_for_failover(0);
  // The replicated lease survived and still excludes; so did the other shard's.
  EXPECT_TRUE(survivor.valid());
  EXPECT_TRUE(elsewhere.valid());
  EXPECT_FALSE(other.lock(survivor.name()).try_lock());
  EXPECT_FALSE(other.lock(elsewhere.name()).try_lock());
  auto retaken = other.lock(doomed.name()).try_acquire();
  EXPECT_TRUE(retaken.has_value());
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  ::testing::Test::RecordProperty("kill_to_lost_holder_told_ms",
                                  std::to_string(duration_cast<milliseconds>(told_after).count()));
  ::testing::Test::RecordProperty(
      "kill_to_first_acquire_ms",
      std::to_string(duration_cast<milliseconds>(acquired_after).count()));
  std::printf("kill -> lost holder told: %lld ms; kill -> first acquire in the shard: %lld ms\n",
              static_cast<long long>(duration_cast<milliseconds>(told_after).count()),
              static_cast<long long>(duration_cast<milliseconds>(acquired_after).count()));
  replica.cli({"CONFIG", "SET", "masterauth", ""});
}

TEST(Cluster, UnreachableSeedsFailWithAClearErrorNamingThem) {
  RefusingPort a;
  RefusingPort b;
  const std::string uri = "redis-cluster://127.0.0.1:" + std::to_string(a.port()) +
                          ",127.0.0.1:" + std::to_string(b.port());
  try {
    Client client(uri);
    FAIL() << "connected to nothing";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::connection_failed));
    EXPECT_NE(std::string(e.what()).find(std::to_string(a.port())), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(b.port())), std::string::npos) << e.what();
  }
}

TEST(Cluster, AUserDeniedClusterShardsGetsTheSlotMapFromClusterSlots) {
  RedisCluster cluster;
  for (const RedisServer* node : cluster.nodes()) {
    node->cli(
        {"ACL", "SETUSER", "app", "on", ">app-secret", "~*", "&*", "+@all", "-cluster|shards"});
  }
  ClientOptions o = cluster_options(cluster);
  o.username = "app";
  o.password = "app-secret";
  Client client(o);
  for (int shard = 0; shard < RedisCluster::kShards; ++shard) {
    const std::string n = name_in_shard(shard, "acl-");
    SCOPED_TRACE("shard " + std::to_string(shard) + " name " + n);
    Lease lease = client.lock(n).acquire();
    EXPECT_TRUE(lease.valid());
    EXPECT_EQ(cluster.masters()[static_cast<std::size_t>(shard)]->cli({"EXISTS", n}), "1");
    lease.release();
  }
  long long slots_calls = 0;
  for (const RedisServer* node : cluster.nodes()) {
    const std::string stats = node->cli({"INFO", "commandstats"});
    const std::string field = "cmdstat_cluster|slots:calls=";
    const auto at = stats.find(field);
    if (at != std::string::npos) slots_calls += std::stoll(stats.substr(at + field.size()));
  }
  EXPECT_GT(slots_calls, 0) << "the map came from CLUSTER SLOTS";
}

TEST(Cluster, ASeedThatIsNotAClusterNodeIsRefusedAsSuch) {
  RedisServer plain;
  try {
    Client client("redis-cluster://127.0.0.1:" + std::to_string(plain.port()));
    FAIL() << "a standalone server was taken for a cluster";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("not a cluster node"), std::string::npos) << e.what();
  }
}

TEST(Cluster, AClusterWithASlotNoMasterServesIsRefusedAsDown) {
  RedisCluster cluster;
  for (auto* node : cluster.nodes()) node->cli({"CLUSTER", "DELSLOTS", "0"});
  ASSERT_TRUE(poll_until(
      [&] {
        return cluster.masters()[0]->cli({"CLUSTER", "INFO"}).find("cluster_state:fail") !=
               std::string::npos;
      },
      Clock::now() + 10s));
  try {
    Client client(cluster_uri(cluster));
    FAIL() << "connected to a cluster that is down";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::connection_failed));
    EXPECT_NE(std::string(e.what()).find("slot 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace distlock::test
