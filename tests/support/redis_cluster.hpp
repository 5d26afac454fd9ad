// A real Redis Cluster for integration and fault tests (issue 13, item 6):
// 3 masters + 3 replicas, each a test::RedisServer in cluster mode on its own
// free loopback port and free bus port (--cluster-port), so parallel ctest
// runs never share a port block. Slots and roles are assigned by hand
// (shared/reference/redis-topologies.md, recipe B, 1.3): shard i's master is
// node i and owns slots [kShardFirstSlot[i], kShardLastSlot[i]]; its replica
// is node i + 3. Every node runs with repl-diskless-sync-delay 0 (else each
// full sync waits 5 s) and enable-debug-command yes.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/cluster_node_info.hpp"
#include "support/redis_cli.hpp"
#include "support/redis_server.hpp"
#include "support/slot_migration.hpp"

namespace distlock::test {

struct RedisClusterOptions {
  // cluster-node-timeout: how long until a silent node is marked FAIL. With
  // 1000 ms a killed master's replica took over in 2.1-2.7 s (the reference).
  std::chrono::milliseconds node_timeout{1000};
  // cluster-require-full-coverage. With yes (Redis's default) every slot of
  // every node answers CLUSTERDOWN from a master's FAIL until its promotion.
  bool require_full_coverage = true;
};

// Not thread-safe: use from one thread (the servers' const methods, such as
// cli(), may run concurrently). The destructor SIGKILLs every node by pid and
// removes its directory; it never throws.
class RedisCluster {
 public:
  static constexpr int kShards = 3;
  static constexpr std::array<int, kShards> kShardFirstSlot{0, 5461, 10923};
  static constexpr std::array<int, kShards> kShardLastSlot{5460, 10922, 16383};

  // Starts the 6 nodes, assigns the slots and epochs, MEETs them, makes node
  // i + 3 the replica of node i, and returns once every node reports
  // cluster_state:ok, every node's CLUSTER NODES agrees on the 3 masters,
  // their slots and 3 connected replicas, and every replica has
  // master_link_status:up. Throws std::runtime_error (with node logs) if a
  // node cannot start or this does not happen within 30 s; nodes already
  // started are then stopped.
  explicit RedisCluster(RedisClusterOptions options = {});
  ~RedisCluster();
  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;

  // The current master of each shard, in shard order (after a failover, the
  // promoted replica).
  std::vector<RedisServer*> masters() const;
  // The current replica of each shard that has one, in shard order: a shard
  // whose master was killed and replaced has none (its old master is down).
  std::vector<RedisServer*> replicas() const;
  // All 6 nodes, in start order (node i + 3 was shard i's first replica).
  std::vector<RedisServer*> nodes() const;
  // The master that owns `slot` according to a live node's CLUSTER NODES
  // (the first of masters() that answers). A slot being migrated belongs to
  // its source until SETSLOT NODE. Throws std::out_of_range for a slot
  // outside 0..16383, std::runtime_error if no node names a live master.
  RedisServer& master_for_slot(int slot) const;
  // The replica of `master` as the fixture knows it, nullptr if it has none.
  RedisServer* replica_of(const RedisServer& master) const;
  // CLUSTER KEYSLOT of `key`, asked of a live master.
  int key_slot(const std::string& key) const;
  // CLUSTER NODES of `node`, parsed.
  std::vector<ClusterNodeInfo> cluster_nodes(const RedisServer& node) const;

  // SIGKILLs shard `shard`'s current master and returns at once (the test
  // may watch the failover window). Throws std::out_of_range for a bad shard
  // and std::logic_error if the shard has no replica to take over.
  void kill_master(int shard);
  // After kill_master(shard): waits until its replica's ROLE is master,
  // every live node's CLUSTER NODES names it master of the shard's slots,
  // and every live node reports cluster_state:ok (the reference measured
  // 2.1-2.7 s). The shard's master becomes that replica, and it has no
  // replica. Throws std::runtime_error if this does not happen within `bound`.
  void wait_for_failover(int shard, std::chrono::milliseconds bound = std::chrono::seconds(30));

  // After wait_for_failover(shard): starts the killed old master again on
  // its ports with its nodes.conf, so it rejoins under its node id as the
  // replica of the promoted one (the reference measured 250-290 ms to
  // synced), and waits until its replication link is up and every live node
  // agrees. It is then the shard's replica. Throws std::logic_error if the
  // shard has no killed master to restart, std::runtime_error if it cannot
  // start or this does not happen within `bound`.
  void restart_old_master(int shard, std::chrono::milliseconds bound = std::chrono::seconds(30));

  // Starts moving `slot` from `from` to `to` (both masters): CLUSTER SETSLOT
  // IMPORTING on the target, then MIGRATING on the source. From then on the
  // source answers ASK for a key of the slot it does not have. Throws
  // std::runtime_error if a step fails.
  SlotMigration begin_migration(int slot, RedisServer& from, RedisServer& to);
  // begin_migration(...).finish(): the whole move in one call.
  void migrate_slot(int slot, RedisServer& from, RedisServer& to);

  // Waits until every live node reports cluster_state:ok and every live
  // node's CLUSTER NODES agrees on the masters' slots; throws
  // std::runtime_error after `bound`.
  void wait_until_consistent(std::chrono::milliseconds bound = std::chrono::seconds(30)) const;

  // The last lines of every node's log, for failure messages.
  std::string logs(std::size_t lines = 15) const;

 private:
  friend class SlotMigration;
  struct Shard {
    RedisServer* master;
    RedisServer* replica;  // nullptr once promoted and the old master is down
    RedisServer* down;     // the old master after a failover, until restarted
  };
  void start_nodes();
  void assign_slots_and_meet();
  void attach_replicas();
  void wait_for_replica_links(std::chrono::milliseconds bound) const;
  bool nodes_agree() const;
  std::vector<RedisServer*> live_nodes() const;
  RedisServer* node_on_port(std::uint16_t port) const;
  std::string node_id(const RedisServer& node) const;

  RedisClusterOptions options_;
  std::vector<std::unique_ptr<RedisServer>> nodes_;
  std::array<Shard, kShards> shards_{};
};

}  // namespace distlock::test
