// Redis Cluster: keys routed by slot to their master's connection.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "net/connection.hpp"
#include "net/router.hpp"
#include "topology/cluster_map_refresh.hpp"
#include "topology/cluster_node_pool.hpp"
#include "topology/slot.hpp"
#include "topology/topology.hpp"

namespace distlock::topology {

// The slot map comes from CLUSTER SHARDS (CLUSTER SLOTS before 7.0) of a
// seed at connect(), and again whenever a node answers MOVED (the one slot
// is updated at once, the rest by the refresh) or a master's connection
// drops (refreshed every 250 ms until every mapped master is reachable, so a
// promoted replica is found about when the cluster promotes it).
//
// One pipelined data Connection per master, made on first use; each gets the
// data handlers (script preload; after a reconnect, the check of every
// lease). When the map gives slots to a master the Client had not used for
// them (a failover, a finished migration), the data handlers' on_connected
// runs as after a reconnect: every lease is checked at once, so a holder
// whose key did not survive the failover is told then.
//
// Script calls and commands follow MOVED and ASK (up to 5 redirections) and
// retry TRYAGAIN / CLUSTERDOWN / LOADING / MASTERDOWN with backoff
// (10 ms doubling to 200 ms) for at most command_timeout; each of those
// replies means the command did not run. A reply lost with its connection
// is still never re-sent (as on one server).
//
// Pub/sub, classic (ClientOptions::sharded_pubsub off, or auto with a
// master older than 7.0): SUBSCRIBE on one connection to one master (PUBLISH
// is broadcast over the cluster bus, so every node's subscribers hear every
// unlock). When that master goes away the subscription moves to another
// master and every channel is subscribed again.
//
// Pub/sub, sharded (on, or auto when every master found at connect() runs
// 7.0+; decided once there): each channel is SSUBSCRIBEd on a connection to
// the master of its slot, and the scripts routed by a name SPUBLISH
// (script::sharded_twin), except for names whose channels do not share
// their slot (channels_share_slot), which stay classic. A channel follows
// its slot: MOVED to a SSUBSCRIBE is followed, the server's "sunsubscribe"
// push (its slot moved away) subscribes it again, and a map that moved
// slots, or a shard connection that dropped or came back, subscribes every
// channel again (the confirmation wakes its waiters to read the state).
//
// The parts: ClusterRedirect classifies the replies, ClusterNodePool holds
// the nodes, the slot map and the connections, ClusterMapRefresh fetches the
// map again, RoutedCommand resends plain commands.
//
// Thread safety: data_for / subscriber_for / command / router() from any
// thread; the rest on the I/O thread. The per-call lookup (batch_group, and
// data_for once the slot's master has a connection) takes no lock and
// allocates nothing: the pool's slot table is read with atomic loads, and
// only changes to it (a map installed, a MOVED slot, a first connection)
// take the pool's mutex.
class Cluster final : public Topology, private net::Router, private ClusterNodePool::Connector {
 public:
  Cluster(asio::io_context& io,
          const ClientOptions& options,
          asio::ssl::context* tls,
          net::Connection::Handlers data_handlers,
          net::Connection::Handlers subscriber_handlers);
  ~Cluster() override;

  net::Connection& data_for(std::string_view key) override;
  net::Connection& subscriber_for(std::string_view channel) override;
  std::vector<ChannelRoute> channel_routes(std::string_view channel,
                                           std::string_view route_key) override;
  bool sharded_publish(std::string_view route_key) const override;
  Refusal subscribe_refused(const Value& reply) override;
  // Whether this Cluster uses sharded pub/sub (decided by connect()).
  bool sharded() const noexcept { return sharded_.load(std::memory_order_relaxed); }
  std::uint64_t batch_group(std::string_view key) const override { return key_slot(key); }
  // Asks the seeds in order for the slot map, within connect_timeout each.
  // Throws Error: connection_failed when no seed answers (naming them),
  // invalid_argument when a seed is not a cluster node, connection_failed
  // when the map leaves a slot without a master (CLUSTERDOWN).
  void connect() override;
  void connect_in_background() override;
  void close() override;
  std::error_code command(std::string_view route_key,
                          std::span<const std::string_view> args,
                          net::Completion* completion) override;
  net::Router* router() noexcept override { return this; }
  std::size_t outstanding() override;  // summed over every master

 private:
  // net::Router
  std::optional<net::Resend> resend(const Value& reply,
                                    std::string_view route_key,
                                    unsigned redirects,
                                    std::chrono::milliseconds waited) override;
  void after(std::chrono::milliseconds delay, std::function<void(bool)> f) override;

  // ClusterNodePool::Connector: connections with this Cluster's handlers.
  std::shared_ptr<net::Connection> data_connection(const std::string& host,
                                                   std::uint16_t port) override;
  std::shared_ptr<net::Connection> subscriber_connection(const std::string& host,
                                                         std::uint16_t port,
                                                         bool replacement) override;
  std::shared_ptr<net::Connection> shard_subscriber_connection(const std::string& host,
                                                               std::uint16_t port) override;
  ClientOptions options_for(const std::string& host, std::uint16_t port) const;

  // connect() with one seed: true once its map is installed; false after
  // adding why it failed to `failures`. Throws as connect() does.
  bool connect_to(const ClientOptions::Endpoint& seed, std::string& failures);
  void refresh_later();  // posts a map refresh to the I/O thread
  // ClientOptions::sharded_pubsub automatic: whether every mapped master
  // answers INFO server with a redis_version of 7 or more, within
  // command_timeout (any doubt: no).
  bool every_master_shards();
  // Sharded: SCRIPT LOAD of the sharded twins on every master's connection
  // made before the mode was known (later ones load them in the handshake).
  void preload_twins();
  void on_moved();  // the map moved a slot to another master

  asio::io_context& io_;
  const ClientOptions& options_;
  asio::ssl::context* tls_;
  net::Connection::Handlers data_handlers_;
  net::Connection::Handlers subscriber_handlers_;
  ClusterNodePool pool_;
  ClusterMapRefresh refresh_;
  std::atomic<bool> sharded_{false};
};

}  // namespace distlock::topology
