// Redis Cluster: keys routed by slot to their master's connection.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/connection.hpp"
#include "net/router.hpp"
#include "topology/cluster_map.hpp"
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
// Pub/sub: classic SUBSCRIBE on one connection to one master (PUBLISH is
// broadcast over the cluster bus, so every node's subscribers hear every
// unlock). When that master goes away the subscription moves to another
// master and every channel is subscribed again.
//
// Thread safety: data_for / subscriber_for / command / router() from any
// thread (the map is under a mutex); the rest on the I/O thread.
class Cluster final : public Topology, private net::Router {
 public:
  Cluster(asio::io_context& io,
          const ClientOptions& options,
          asio::ssl::context* tls,
          net::Connection::Handlers data_handlers,
          net::Connection::Handlers subscriber_handlers);
  ~Cluster() override;

  net::Connection& data_for(std::string_view key) override;
  net::Connection& subscriber_for(std::string_view channel) override;
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
  struct Node {
    std::string host;
    std::uint16_t port = 0;
    std::shared_ptr<net::Connection> data;  // made on first use
  };

  // net::Router
  std::optional<net::Resend> resend(const Value& reply,
                                    std::string_view route_key,
                                    unsigned redirects,
                                    std::chrono::milliseconds waited) override;
  void after(std::chrono::milliseconds delay, std::function<void(bool)> f) override;

  // Under mutex_.
  Node& node_locked(const std::string& host, std::uint16_t port);
  net::Connection& connection_locked(Node& node);
  // Installs `ranges`; true when a slot changed master (not on the first map).
  bool install_locked(const std::vector<SlotRange>& ranges);
  bool unhealthy_locked() const;

  // Asks a connected master (any node if none) for the map, then installs it.
  void refresh();
  void ask(net::Connection& c, bool shards);  // CLUSTER SHARDS, or SLOTS
  void refresh_soon();
  void on_map(std::error_code ec, const Value& reply, bool shards);
  // Moves the subscription off a master that is gone (I/O thread).
  void check_subscriber();

  std::shared_ptr<net::Connection> make_connection(const std::string& host,
                                                   std::uint16_t port,
                                                   net::Connection::Role role);

  asio::io_context& io_;
  const ClientOptions& options_;
  asio::ssl::context* tls_;
  net::Connection::Handlers data_handlers_;
  net::Connection::Handlers subscriber_handlers_;

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Node>> nodes_;  // never shrinks: Node& stays valid
  std::array<Node*, kSlotCount> slots_{};
  std::shared_ptr<net::Connection> subscriber_;
  Node* subscriber_node_ = nullptr;
  std::vector<std::shared_ptr<net::Connection>> retired_;  // kept until close
  bool closed_ = false;
  bool mapped_ = false;

  // I/O thread only.
  bool refreshing_ = false;
  bool refresh_again_ = false;
  bool refresh_scheduled_ = false;
  std::size_t refresh_cursor_ = 0;  // under mutex_
  bool subscriber_down_ = false;
  std::shared_ptr<asio::steady_timer> refresh_timer_;
};

}  // namespace distlock::topology
