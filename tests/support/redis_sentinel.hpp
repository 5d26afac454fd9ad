// A real Sentinel deployment for integration and fault tests (issue 13, item
// 6): 1 master + 1 replica + 3 sentinels, each a test::RedisServer on its own
// free loopback port with its own directory. The sentinels are started as
// `redis-server <conf> --sentinel` (Debian's redis-sentinel package may be
// absent), each with a fresh config file of its own (a sentinel rewrites it
// and adds its id; two sharing one would share an id), monitoring the master
// with quorum 2, down-after-milliseconds 1000, failover-timeout 3000 and
// parallel-syncs 1 (shared/reference/redis-topologies.md, section 2). The
// data nodes run with repl-diskless-sync-delay 0.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/redis_server.hpp"

namespace distlock::test {

// Not thread-safe: use from one thread (the servers' const methods, such as
// cli(), may run concurrently). The destructor SIGKILLs every process by pid
// and removes the directories; it never throws.
class RedisSentinelSet {
 public:
  static constexpr int kSentinels = 3;

  // Starts the master, the replica (replicaof the master) and the 3
  // sentinels, and returns once the replica's link is up and every
  // sentinel's SENTINEL MASTER shows the master with 1 replica and 2 other
  // sentinels (about 2.3 s: sentinels find each other by hello messages
  // every 2 s). Throws std::runtime_error (with the logs) if a process cannot
  // start or this does not happen within 30 s; what was started is stopped.
  RedisSentinelSet();
  ~RedisSentinelSet();
  RedisSentinelSet(const RedisSentinelSet&) = delete;
  RedisSentinelSet& operator=(const RedisSentinelSet&) = delete;

  // "mymaster": the name the sentinels monitor.
  const std::string& master_name() const { return name_; }
  // The data node the fixture last saw the sentinels promote (at first the
  // initial master).
  RedisServer& master() const { return *master_; }
  // The other data node: at first the replica; after failover() the old
  // master (which stays a writable master until the sentinels convert it,
  // about 11 s later, unless reattach_old_master() is called); after
  // kill_master() the killed, not running, old master.
  RedisServer& replica() const { return *replica_; }
  // The 3 sentinels.
  std::vector<RedisServer*> sentinels() const;

  // SENTINEL GET-MASTER-ADDR-BY-NAME asked of the first running sentinel
  // that answers; returns the port. Throws std::runtime_error if none
  // answers with an address.
  std::uint16_t current_master_port() const;

  // SENTINEL FAILOVER on the first sentinel, then waits until every
  // sentinel names the replica as master and the replica's ROLE is master
  // (about 1.2 s measured); master() and replica() then swap. The old master
  // is left alone. Throws std::runtime_error if the command is refused or
  // this does not happen within `bound`.
  void failover(std::chrono::milliseconds bound = std::chrono::seconds(30));
  // SIGKILLs the master, then waits until every running sentinel names the
  // replica as master and its ROLE is master (2.2-2.5 s measured); master()
  // and replica() then swap (replica() is down). Throws std::runtime_error if
  // this does not happen within `bound`.
  void kill_master(std::chrono::milliseconds bound = std::chrono::seconds(30));
  // After failover(): makes the old master a replica of the new one now
  // (REPLICAOF, as the sentinels would about 11 s later) and waits until its
  // link to the new master is up. The sentinels learn its new role at their
  // next INFO of it (up to 10 s later) and then leave it alone. Throws
  // std::logic_error if replica() is not running, std::runtime_error if
  // REPLICAOF is refused or the link is not up within `bound`.
  void reattach_old_master(std::chrono::milliseconds bound = std::chrono::seconds(30));

  // The last lines of every process's log, for failure messages.
  std::string logs(std::size_t lines = 15) const;

 private:
  std::unique_ptr<RedisServer> start_sentinel() const;
  bool sentinels_see(const RedisServer& master, int replicas) const;
  bool sentinels_name(const RedisServer& master) const;
  void wait_for_promotion(std::chrono::milliseconds bound);

  std::string name_ = "mymaster";
  std::unique_ptr<RedisServer> first_;
  std::unique_ptr<RedisServer> second_;
  RedisServer* master_ = nullptr;
  RedisServer* replica_ = nullptr;
  std::vector<std::unique_ptr<RedisServer>> sentinels_;
};

}  // namespace distlock::test
