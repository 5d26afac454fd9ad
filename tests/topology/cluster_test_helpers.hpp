// Helpers the Cluster tests share: seed URIs, names whose slot lies in a
// given shard, and counters read from a node's INFO.
#pragma once

#include <chrono>
#include <future>
#include <string>

#include "distlock/client.hpp"
#include "distlock/client_options.hpp"
#include "support/redis_cluster.hpp"
#include "topology/slot.hpp"

namespace distlock::test {

inline std::string cluster_uri(const RedisCluster& cluster, bool all_nodes = false) {
  std::string uri = "redis-cluster://";
  const auto nodes = all_nodes ? cluster.nodes() : cluster.masters();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i) uri += ",";
    uri += "127.0.0.1:" + std::to_string(nodes[i]->port());
  }
  return uri;
}

inline ClientOptions cluster_options(const RedisCluster& cluster) {
  return ClientOptions::from_uri(cluster_uri(cluster));
}

// With classic pub/sub (SUBSCRIBE on one connection, PUBLISH broadcast), for
// the tests of that mode; the default on these 7.0 nodes is sharded.
inline ClientOptions classic_options(const RedisCluster& cluster) {
  ClientOptions o = cluster_options(cluster);
  o.sharded_pubsub = ClientOptions::ShardedPubsub::off;
  return o;
}

// Sharded subscribers of `channel` on `node` (PUBSUB SHARDNUMSUB is
// node-local).
inline long long shard_subscribers(const RedisServer& node, const std::string& channel) {
  const std::string reply = node.cli({"PUBSUB", "SHARDNUMSUB", channel});
  const auto nl = reply.rfind('\n');
  return nl == std::string::npos ? 0 : std::stoll(reply.substr(nl + 1));
}

inline int shard_of_slot(int slot) {
  for (int s = 0; s < RedisCluster::kShards; ++s) {
    if (slot >= RedisCluster::kShardFirstSlot[s] && slot <= RedisCluster::kShardLastSlot[s]) {
      return s;
    }
  }
  return -1;
}

// A name whose own slot (no hash tag) is served by shard `shard`.
inline std::string name_in_shard(int shard, const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string name = prefix + std::to_string(i);
    if (shard_of_slot(topology::key_slot(name)) == shard) return name;
  }
}

// A counter of INFO `section` on `node`: the calls= of a commandstats line or
// the count= of an errorstats line named `field` ("cmdstat_evalsha:",
// "errorstat_MOVED:"); 0 when the line is absent.
inline long long stat(const RedisServer& node,
                      const std::string& section,
                      const std::string& field) {
  const std::string info = node.cli({"INFO", section});
  const auto at = info.find(field);
  if (at == std::string::npos) return 0;
  const auto calls = info.find("calls=", at);
  const auto count = info.find("count=", at);
  const auto pos =
      calls != std::string::npos && calls < info.find('\n', at) ? calls + 6 : count + 6;
  return std::stoll(info.substr(pos));
}

// Subscribers of `channel` on `node` (PUBSUB NUMSUB is node-local).
inline long long subscribers(const RedisServer& node, const std::string& channel) {
  const std::string reply = node.cli({"PUBSUB", "NUMSUB", channel});
  const auto nl = reply.rfind('\n');
  return nl == std::string::npos ? 0 : std::stoll(reply.substr(nl + 1));
}

// The unlock channel of the lock `name` (Redisson's layout).
inline std::string lock_channel(const std::string& name) {
  return "redisson_lock__channel:{" + name + "}";
}

// Closes `client` when destroyed while `wait` (a wait of that Client on
// another thread) has not finished: a wait that was never woken then ends
// with closed at once instead of holding the test, on a failed assertion,
// until its own long deadline. Declare it after the future.
template <class T>
class CloseIfStillWaiting {
 public:
  CloseIfStillWaiting(Client& client, const std::future<T>& wait) : client_(client), wait_(wait) {}
  ~CloseIfStillWaiting() {
    if (wait_.valid() && wait_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      client_.close();
    }
  }
  CloseIfStillWaiting(const CloseIfStillWaiting&) = delete;
  CloseIfStillWaiting& operator=(const CloseIfStillWaiting&) = delete;

 private:
  Client& client_;
  const std::future<T>& wait_;
};

}  // namespace distlock::test
