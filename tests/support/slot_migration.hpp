// A Redis Cluster slot moved step by step (the Cluster test fixture).
#pragma once

#include <cstddef>

#include "support/redis_server.hpp"

namespace distlock::test {

class RedisCluster;

// A slot moving from one master to another, step by step, so a test can act
// between the steps (ASK from the source for a key it no longer has, TRYAGAIN
// for a multi-key command over present and absent keys). Made by
// RedisCluster::begin_migration. Not thread-safe. Destroying it unfinished
// leaves the slot MIGRATING/IMPORTING (the cluster is still usable).
class SlotMigration {
 public:
  int slot() const { return slot_; }
  RedisServer& source() const { return *from_; }
  RedisServer& target() const { return *to_; }

  // MIGRATEs every key of the slot still on the source to the target
  // (GETKEYSINSLOT, MIGRATE ... KEYS). Afterwards the source answers ASK for
  // them. Returns how many keys moved. Throws std::runtime_error if MIGRATE
  // fails or finish() already ran.
  std::size_t move_keys();
  // move_keys(), then CLUSTER SETSLOT <slot> NODE <target> on the target, the
  // source and every other master, then waits (10 s bound) until every live
  // node's CLUSTER NODES gives the slot to the target. The source answers
  // MOVED from then on. Throws std::runtime_error on a failed step or timeout.
  // A second call does nothing.
  void finish();

 private:
  friend class RedisCluster;
  SlotMigration(RedisCluster& cluster, int slot, RedisServer& from, RedisServer& to);

  RedisCluster* cluster_;
  int slot_;
  RedisServer* from_;
  RedisServer* to_;
  bool finished_ = false;
};

}  // namespace distlock::test
