// The Client's one pub/sub connection under Cluster, classic pub/sub
// (sharded_pubsub off; the sharded form: cluster_sharded_pubsub_test.cpp),
// when the master it is on dies: the subscription moves to another master, every channel is
// subscribed again there, and a waiter that subscribed before the move is
// woken by an unlock message published after it.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>

#include "distlock/distlock.hpp"
#include "support/poll_until.hpp"
#include "support/redis_cluster.hpp"
#include "topology/cluster_test_helpers.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Subscribers of `channel` over every running node but `skip`.
long long subscribers_elsewhere(const RedisCluster& cluster,
                                const RedisServer& skip,
                                const std::string& channel) {
  long long n = 0;
  for (const RedisServer* node : cluster.nodes()) {
    if (node != &skip && node->running()) n += subscribers(*node, channel);
  }
  return n;
}

TEST(Cluster, AWaiterSubscribedBeforeItsSubscriptionsMasterDiesIsWokenByAnUnlockAfterTheMove) {
  // Slots of the surviving shards keep answering during the failover.
  RedisClusterOptions topology;
  topology.require_full_coverage = false;
  RedisCluster cluster(topology);
  auto holding = classic_options(cluster);
  // The holder's key lives 10 min: a waiter that missed the message would
  // sleep on that TTL, far past the test's bound below, and fail.
  holding.watchdog_timeout = 600s;
  Client holder(holding);
  auto waiting = classic_options(cluster);
  waiting.reconnect_min_delay = 10ms;
  waiting.reconnect_max_delay = 100ms;
  Client waiter(waiting);

  // The lock lives in shard 1, which the kill below leaves alone.
  auto lock = holder.lock(name_in_shard(1, "moving-"));
  const std::string channel = lock_channel(lock.name());
  Lease lease = lock.acquire();
  RedisServer& owner = *cluster.masters()[1];
  // The Client subscribes on the master of slot 0: shard 0's.
  RedisServer& doomed = *cluster.masters()[0];

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
  // Settled: subscribed on the doomed master, and its attempt after
  // subscribing (the second) made.
  ASSERT_TRUE(poll_until(
      [&] {
        return subscribers(doomed, channel) == 1 &&
               stat(owner, "commandstats", "cmdstat_evalsha:") >= attempts_before + 2;
      },
      Clock::now() + 10s));
  const long long attempts_settled = stat(owner, "commandstats", "cmdstat_evalsha:");

  cluster.kill_master(0);
  // The subscription moves to a live master, and the resubscription's
  // confirmation makes the waiter try once more (an unlock may have been
  // missed while it was down).
  ASSERT_TRUE(poll_until(
      [&] {
        return subscribers_elsewhere(cluster, doomed, channel) == 1 &&
               stat(owner, "commandstats", "cmdstat_evalsha:") >= attempts_settled + 1;
      },
      Clock::now() + 15s))
      << "the subscription did not move off the killed master\n"
      << cluster.logs();
  ASSERT_EQ(got.wait_for(0s), std::future_status::timeout) << "the lock is still held";

  lease.release();
  // Bounded far below both fallbacks (the holder's TTL and the waiter's own
  // deadline, 10 min each): only the message can end the wait in time.
  const bool woken = got.wait_for(25s) == std::future_status::ready;
  ASSERT_TRUE(woken) << "the unlock message after the move never woke the waiter";
  std::optional<Lease> second = got.get();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(owner.cli({"EXISTS", lock.name()}), "1");
  second->release();
}

}  // namespace
}  // namespace distlock::test
