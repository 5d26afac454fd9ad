// Sharded pub/sub on a 3+3 Redis Cluster (ClientOptions::sharded_pubsub,
// docs/topologies.md): waiters SSUBSCRIBE on the master that owns their
// channel's slot, releases SPUBLISH from their scripts, and both meet
// Redisson 3.22+ (which does the same by default). A subscription follows
// its slot through a live migration and a master's death.
//
// Every wake-up test gives the holder a 10 min lease and the waiter a 10 min
// wait, and bounds the wake at 25 s: only a message can end the wait in
// time (the poll fallback is the holder's TTL).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>

#include "distlock/distlock.hpp"
#include "support/poll_until.hpp"
#include "support/raw_subscriber.hpp"
#include "support/redis_cluster.hpp"
#include "sync/latch_recheck.hpp"
#include "topology/cluster_test_helpers.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Sharded = ClientOptions::ShardedPubsub;

constexpr auto kWakeBound = 25s;

// RedissonLock's unlock script as Redisson 3.22+ sends it: KEYS = the lock,
// its channel, the unlock latch; ARGV = the unlock message, the lease, the
// holder's field, the publish command ("spublish" under its default
// shardedSubscriptionMode AUTO on a 7.0 Cluster, "publish" otherwise) and
// the latch's timeout. Played here raw, as a Redisson client would.
constexpr const char* kRedissonUnlock = R"lua(
local val = redis.call('get', KEYS[3]);
if val ~= false then return tonumber(val); end;
if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end;
local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1);
if (counter > 0) then
  redis.call('pexpire', KEYS[1], ARGV[2]);
  redis.call('set', KEYS[3], 0, 'px', ARGV[5]);
  return 0;
else
  redis.call('del', KEYS[1]);
  redis.call(ARGV[4], KEYS[2], ARGV[1]);
  redis.call('set', KEYS[3], 1, 'px', ARGV[5]);
  return 1;
end;
)lua";

ClientOptions options(const RedisCluster& cluster, Sharded mode) {
  ClientOptions o = cluster_options(cluster);
  o.sharded_pubsub = mode;
  return o;
}

// A holder whose lease outlives every bound here; also the waiters' options,
// since a waiter's own lease sets its fallbacks (a semaphore's re-check, a
// fair waiter's liveness and the TTL of a grant made to it).
ClientOptions holding(const RedisCluster& cluster, Sharded mode) {
  ClientOptions o = options(cluster, mode);
  o.watchdog_timeout = 600s;
  return o;
}

long long on_every_master(const RedisCluster& cluster, const std::string& field) {
  long long n = 0;
  for (const RedisServer* m : cluster.masters()) n += stat(*m, "commandstats", field);
  return n;
}

// A lock waiter of `client` on `name` that waits 10 min on another thread.
struct Waiting {
  Waiting(Client& client, const std::string& name)
      : lock(client.lock(name)), got(std::async(std::launch::async, [this]() -> bool {
          try {
            if (!lock.try_lock_for(10min)) return false;
            lock.unlock();
            return true;
          } catch (const Error&) {
            return false;  // closed by `closer` when never woken
          }
        })) {}
  bool woken() { return got.wait_for(kWakeBound) == std::future_status::ready && got.get(); }
  Lock lock;
  std::future<bool> got;
};

// Waits until `node` has `count` sharded subscribers of `channel` and the
// waiter's attempt after that subscription (EVALSHA calls on `owner` past
// `attempts`) is made: from then on only a message can wake it.
void settle(const RedisServer& node,
            const std::string& channel,
            const RedisServer& owner,
            long long attempts) {
  ASSERT_TRUE(poll_until(
      [&] {
        return shard_subscribers(node, channel) == 1 &&
               stat(owner, "commandstats", "cmdstat_evalsha:") >= attempts + 2;
      },
      Clock::now() + 15s))
      << "no sharded subscription of " << channel << " on " << node.port();
}

TEST(ShardedPubsub, AutoOnA7ClusterWaitsOnTheOwningMasterAndNoMasterSeesAClassicPublish) {
  RedisCluster cluster;
  Client holder(holding(cluster, Sharded::automatic));
  Client waiter(holding(cluster, Sharded::automatic));
  for (int shard = 0; shard < RedisCluster::kShards; ++shard) {
    SCOPED_TRACE("shard " + std::to_string(shard));
    auto lock = holder.lock(name_in_shard(shard, "sharded-"));
    const std::string channel = lock_channel(lock.name());
    Lease lease = lock.acquire();
    RedisServer& owner = *cluster.masters()[static_cast<std::size_t>(shard)];
    const long long attempts = stat(owner, "commandstats", "cmdstat_evalsha:");
    Waiting w(waiter, lock.name());
    const CloseIfStillWaiting closer(waiter, w.got);
    settle(owner, channel, owner, attempts);
    for (const RedisServer* node : cluster.nodes()) {
      EXPECT_EQ(subscribers(*node, channel), 0) << "a classic subscription on " << node->port();
      if (node != &owner) {
        EXPECT_EQ(shard_subscribers(*node, channel), 0) << node->port();
      }
    }
    lease.release();
    ASSERT_TRUE(w.woken()) << "the sharded unlock never woke the waiter";
  }
  EXPECT_EQ(on_every_master(cluster, "cmdstat_publish:"), 0)
      << "a release broadcast a classic PUBLISH";
  EXPECT_GE(on_every_master(cluster, "cmdstat_spublish:"), 3);
}

// The Redisson side, both ways, in each mode: its unlock script wakes our
// waiter, and its raw waiter hears our unlock.
void redisson_meets_distlock(Sharded mode) {
  RedisCluster cluster;
  const bool sharded = mode == Sharded::on;
  const std::string publish = sharded ? "spublish" : "publish";
  const std::string verb = sharded ? "SSUBSCRIBE" : "SUBSCRIBE";
  Client waiter(holding(cluster, mode));
  const std::string name = name_in_shard(2, "redisson-");
  const std::string channel = lock_channel(name);
  RedisServer& owner = *cluster.masters()[2];

  // A Redisson holder (its field "<uuid>:<thread id>"), 10 min lease.
  owner.cli({"HSET", name, "redisson-uuid:1", "1"});
  owner.cli({"PEXPIRE", name, "600000"});
  const long long attempts = stat(owner, "commandstats", "cmdstat_evalsha:");
  Waiting w(waiter, name);
  const CloseIfStillWaiting closer(waiter, w.got);
  if (sharded) {
    settle(owner, channel, owner, attempts);
  } else {
    ASSERT_TRUE(poll_until(
        [&] {
          long long n = 0;
          for (auto* node : cluster.nodes()) n += subscribers(*node, channel);
          return n == 1 && stat(owner, "commandstats", "cmdstat_evalsha:") >= attempts + 2;
        },
        Clock::now() + 15s));
  }
  const std::string released = owner.cli({"EVAL", kRedissonUnlock, "3", name, channel,
                                          "redisson_unlock_latch:{" + name + "}:r1", "0", "30000",
                                          "redisson-uuid:1", publish, "5000"});
  ASSERT_EQ(released, "1") << "Redisson's unlock did not run";
  ASSERT_TRUE(w.woken()) << "Redisson's " << publish << " never woke the distlock waiter";

  // A Redisson waiter (raw, on the owning master: where Redisson subscribes
  // a shard channel) hears distlock's unlock.
  RawSubscriber redisson_waiter(owner.port(), channel, verb);
  ASSERT_TRUE(redisson_waiter.wait_for(sharded ? "ssubscribe" : "subscribe", 10s));
  Client holder(holding(cluster, mode));
  Lock lock = holder.lock(name);
  lock.lock();
  lock.unlock();
  EXPECT_TRUE(redisson_waiter.wait_for(sharded ? "smessage" : "message", 10s))
      << "distlock's unlock never reached a Redisson " << verb << " waiter";
}

TEST(ShardedPubsub, RedissonsSpublishUnlockWakesOurWaiterAndItsSsubscribeWaiterHearsOurs) {
  redisson_meets_distlock(Sharded::on);
}

TEST(ShardedPubsub, WithShardedPubsubOffRedissonsClassicPublishAndSubscribeMeetOursToo) {
  redisson_meets_distlock(Sharded::off);
}

TEST(ShardedPubsub, AWaiterFollowsItsChannelsSlotThroughALiveMigration) {
  RedisCluster cluster;
  Client holder(holding(cluster, Sharded::on));
  Client waiter(holding(cluster, Sharded::on));
  auto lock = holder.lock(name_in_shard(0, "migrating-"));
  const std::string channel = lock_channel(lock.name());
  Lease lease = lock.acquire();
  RedisServer& from = *cluster.masters()[0];
  RedisServer& to = *cluster.masters()[1];
  const long long attempts = stat(from, "commandstats", "cmdstat_evalsha:");
  Waiting w(waiter, lock.name());
  const CloseIfStillWaiting closer(waiter, w.got);
  settle(from, channel, from, attempts);

  const long long attempts_on_target = stat(to, "commandstats", "cmdstat_evalsha:");
  // Keys and channel move; the source ends our subscription (its push).
  cluster.migrate_slot(cluster.key_slot(lock.name()), from, to);
  // Subscribed again on the new owner, and the confirmation made the waiter
  // read once more (there).
  settle(to, channel, to, attempts_on_target - 1);
  EXPECT_EQ(shard_subscribers(from, channel), 0);
  ASSERT_EQ(w.got.wait_for(0s), std::future_status::timeout) << "the lock is still held";

  lease.release();
  ASSERT_TRUE(w.woken()) << "the unlock after the migration never woke the waiter";
}

TEST(ShardedPubsub, AWaiterFollowsItsChannelsSlotToThePromotedReplicaAfterAMasterDies) {
  RedisClusterOptions topology;
  topology.require_full_coverage = false;
  RedisCluster cluster(topology);
  auto waiting = holding(cluster, Sharded::on);
  waiting.reconnect_min_delay = 10ms;
  waiting.reconnect_max_delay = 100ms;
  Client waiter(waiting);
  auto holder_options = holding(cluster, Sharded::on);
  holder_options.reconnect_min_delay = 10ms;
  holder_options.reconnect_max_delay = 100ms;
  Client holder(holder_options);
  auto lock = holder.lock(name_in_shard(0, "failover-"));
  const std::string channel = lock_channel(lock.name());
  Lease lease = lock.acquire();
  RedisServer& doomed = *cluster.masters()[0];
  RedisServer& replica = *cluster.replica_of(doomed);
  // The holder's key (the shard's only key) must survive the failover.
  ASSERT_TRUE(poll_until([&] { return replica.cli({"DBSIZE"}) == "1"; }, Clock::now() + 10s));
  const long long attempts = stat(doomed, "commandstats", "cmdstat_evalsha:");
  Waiting w(waiter, lock.name());
  const CloseIfStillWaiting closer(waiter, w.got);
  settle(doomed, channel, doomed, attempts);

  const long long attempts_on_replica = stat(replica, "commandstats", "cmdstat_evalsha:");
  cluster.kill_master(0);
  cluster.wait_for_failover(0);
  settle(replica, channel, replica, attempts_on_replica - 1);
  ASSERT_EQ(w.got.wait_for(0s), std::future_status::timeout) << "the lock is still held";

  lease.release();
  ASSERT_TRUE(w.woken()) << "the unlock on the promoted replica never woke the waiter\n"
                         << cluster.logs();
}

// Names whose channels cannot share their slot ("a}b": the channel's hash
// tag is "a") cannot be SPUBLISHed from a script routed by the name; they
// stay on classic pub/sub, and still wake their waiters.
TEST(ShardedPubsub, ANameWhoseChannelLeavesItsSlotStaysClassicAndStillWakes) {
  RedisCluster cluster;
  Client holder(holding(cluster, Sharded::on));
  Client waiter(holding(cluster, Sharded::on));
  const std::string name = "brace}name";
  ASSERT_NE(cluster.key_slot(name), cluster.key_slot(lock_channel(name)));
  auto lock = holder.lock(name);
  Lease lease = lock.acquire();
  RedisServer& owner = cluster.master_for_slot(cluster.key_slot(name));
  const long long attempts = stat(owner, "commandstats", "cmdstat_evalsha:");
  Waiting w(waiter, name);
  const CloseIfStillWaiting closer(waiter, w.got);
  ASSERT_TRUE(poll_until(
      [&] {
        long long n = 0;
        for (auto* node : cluster.nodes()) n += subscribers(*node, lock_channel(name));
        return n == 1 && stat(owner, "commandstats", "cmdstat_evalsha:") >= attempts + 2;
      },
      Clock::now() + 15s));
  lease.release();
  ASSERT_TRUE(w.woken()) << "the classic unlock of a brace name never woke the waiter";
}

// Every kind of waiter wakes on a sharded message: a fair lock's (its own
// per-waiter channel), a read-write lock's writer, a semaphore's and a
// latch's.
TEST(ShardedPubsub, FairReadWriteSemaphoreAndLatchWaitersAreWokenBySpublish) {
  // The latch's re-check (5 s by default) is its fallback: far above the bound.
  struct NoLatchRecheck {
    NoLatchRecheck() { sync::set_latch_recheck(10min); }
    ~NoLatchRecheck() { sync::set_latch_recheck(before); }
    std::chrono::milliseconds before = sync::latch_recheck();
  } no_recheck;
  RedisCluster cluster;
  Client holder(holding(cluster, Sharded::on));
  Client waiter(holding(cluster, Sharded::on));
  const auto woken_within_bound = [&](std::future<bool>& f) {
    return f.wait_for(kWakeBound) == std::future_status::ready && f.get();
  };
  {
    SCOPED_TRACE("fair lock");
    Lock held = holder.fair_lock(name_in_shard(1, "fair-"));
    held.lock();
    Lock wanted = waiter.fair_lock(held.name());
    auto f = std::async(std::launch::async, [&] {
      if (!wanted.try_lock_for(10min)) return false;
      wanted.unlock();
      return true;
    });
    const CloseIfStillWaiting closer(waiter, f);
    const std::string prefix = lock_channel(held.name()) + ":";
    ASSERT_TRUE(poll_until(
        [&] {
          const std::string reply =
              cluster.masters()[1]->cli({"PUBSUB", "SHARDCHANNELS", prefix + "*"});
          return reply.find(prefix) != std::string::npos;
        },
        Clock::now() + 15s));
    held.unlock();
    EXPECT_TRUE(woken_within_bound(f));
  }
  {
    SCOPED_TRACE("read-write lock");
    ReadWriteLock held = holder.read_write_lock(name_in_shard(2, "rw-"));
    held.read_lock().lock();
    ReadWriteLock wanted = waiter.read_write_lock(held.name());
    auto f = std::async(std::launch::async, [&] {
      Lock w = wanted.write_lock();
      if (!w.try_lock_for(10min)) return false;
      w.unlock();
      return true;
    });
    const CloseIfStillWaiting closer(waiter, f);
    ASSERT_TRUE(poll_until(
        [&] {
          return shard_subscribers(*cluster.masters()[2],
                                   "redisson_rwlock:{" + held.name() + "}") == 1;
        },
        Clock::now() + 15s));
    held.read_lock().unlock();
    EXPECT_TRUE(woken_within_bound(f));
  }
  {
    SCOPED_TRACE("semaphore");
    Semaphore empty = holder.semaphore(name_in_shard(0, "sem-"));
    ASSERT_TRUE(empty.try_set_permits(0));
    Semaphore wanted = waiter.semaphore(empty.name());
    auto f = std::async(std::launch::async, [&] {
      if (!wanted.try_acquire_for(1, 10min)) return false;
      wanted.release(1);
      return true;
    });
    const CloseIfStillWaiting closer(waiter, f);
    ASSERT_TRUE(poll_until(
        [&] {
          return shard_subscribers(*cluster.masters()[0], "redisson_sc:{" + empty.name() + "}") ==
                 1;
        },
        Clock::now() + 15s));
    empty.add_permits(1);
    EXPECT_TRUE(woken_within_bound(f));
  }
  {
    SCOPED_TRACE("latch");
    Latch closed = holder.latch(name_in_shard(1, "latch-"));
    ASSERT_TRUE(closed.try_set_count(1));
    Latch waiting_on = waiter.latch(closed.name());
    auto f = std::async(std::launch::async, [&] { return waiting_on.wait_for(10min); });
    const CloseIfStillWaiting closer(waiter, f);
    ASSERT_TRUE(poll_until(
        [&] {
          return shard_subscribers(*cluster.masters()[1],
                                   "redisson_countdownlatch__channel:{" + closed.name() + "}") == 1;
        },
        Clock::now() + 15s));
    closed.count_down();
    EXPECT_TRUE(woken_within_bound(f));
  }
  EXPECT_EQ(on_every_master(cluster, "cmdstat_publish:"), 0);
}

}  // namespace
}  // namespace distlock::test
