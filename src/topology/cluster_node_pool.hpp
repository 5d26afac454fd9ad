// The Cluster's nodes and slot map: one data connection per master, made on
// first use, and the one pub/sub connection's placement.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "distlock/client_options.hpp"
#include "net/connection.hpp"
#include "topology/cluster_map.hpp"
#include "topology/cluster_redirect.hpp"
#include "topology/slot.hpp"

namespace distlock::topology {

// Every node the Client has heard of (seeds, map entries, redirection
// targets) is kept for the life of the pool, each with its data connection
// once one is needed; slot -> node comes from the installed map and MOVED.
// A slot with no known master falls back to the first node (the first seed
// when none is known): a wrong node answers MOVED.
//
// Thread safety: every member may be called from any thread except where a
// comment says "I/O thread". Changes (a new node, a connection made on first
// use, a map installed, a MOVED slot) take one mutex, never held while a
// connection is closed; the Connector is called under it. The per-call
// lookup, data_for() of a slot whose master's connection exists, takes no
// lock and allocates nothing: the slot table is an array of atomic node
// pointers and each node publishes its connection once, atomically. Nodes
// are never freed before the pool, so a pointer read from the table stays
// valid; a reader racing an install sees each slot's old or new master
// (whole maps need no consistency: a call touches one slot, and a stale
// master answers MOVED).
class ClusterNodePool {
 public:
  // Makes connections (not started) for the pool; their handlers are the
  // owner's. `replacement`: a pub/sub connection that takes over from one
  // whose master is gone, so it must subscribe every channel again.
  class Connector {
   public:
    virtual std::shared_ptr<net::Connection> data_connection(const std::string& host,
                                                             std::uint16_t port) = 0;
    virtual std::shared_ptr<net::Connection> subscriber_connection(const std::string& host,
                                                                   std::uint16_t port,
                                                                   bool replacement) = 0;
    // A sharded pub/sub connection to one master (SSUBSCRIBE).
    virtual std::shared_ptr<net::Connection> shard_subscriber_connection(const std::string& host,
                                                                         std::uint16_t port) = 0;

   protected:
    ~Connector() = default;
  };

  // What installing a map found.
  struct Installed {
    bool moved = false;      // a slot changed master (never on the first map)
    bool unhealthy = false;  // a slot without master, or a mapped master not connected
  };

  ClusterNodePool(const ClientOptions& options, Connector& connector);

  // The data connection of the master of `slot`; made and started on first
  // use (not started after close()). Lock-free and allocation-free once that
  // connection exists.
  net::Connection& data_for(std::uint16_t slot);
  // The pub/sub connection: made and started on first use, to the first
  // mapped master (the first seed before any map).
  net::Connection& subscriber();
  // Sharded pub/sub: the pub/sub connection of the master of `slot` (as
  // data_for picks it), made and started on first use.
  net::Connection& shard_subscriber(std::uint16_t slot);
  // Closes the sharded pub/sub connections of nodes that master no slot any
  // more (a failed or demoted master, a master whose slots all migrated):
  // their channels are subscribed where their slots are now. I/O thread.
  void retire_idle_shard_subscribers();
  // The data connection of every mapped master (made and started if need
  // be), one per master.
  std::vector<net::Connection*> masters();

  // The connection of a MOVED or ASK target (`r.redirection()`); after MOVED,
  // `r.slot` maps to it from now on. nullptr once closed.
  net::Connection* follow(const ClusterRedirect& r);
  bool closed() const;

  // Adds every seed as a node (no connection yet).
  void add_seeds();
  // Installs `ranges` fetched from `host`:`port` over `connection` (made
  // outside the pool), which becomes that node's data connection unless it
  // has one already (then `connection` is closed).
  void adopt(const std::vector<SlotRange>& ranges,
             const std::string& host,
             std::uint16_t port,
             std::shared_ptr<net::Connection> connection);

  // The connection to ask for the map: a connected node's, else the next
  // node's in turn (made and started if needed), so a dead node (often the
  // seed known first) is not the only one ever asked. nullptr when closed or
  // no node is known.
  net::Connection* map_source();
  // Installs `ranges` (nullopt: no usable map came; it counts as unhealthy).
  // nullopt when the pool is closed (nothing is installed).
  std::optional<Installed> install(const std::optional<std::vector<SlotRange>>& ranges);

  // The pub/sub connection's state, told by its handlers. I/O thread.
  void subscriber_up() { subscriber_down_ = false; }
  void subscriber_down() { subscriber_down_ = true; }
  // When the pub/sub connection is down and its node no longer masters a
  // slot or is unreachable, moves it to a connected master (a replacement
  // connection; the old one is closed). I/O thread.
  void move_subscriber_if_stranded();

  // Closes every connection; no connection is started after this.
  void close();
  std::size_t outstanding() const;  // summed over every data connection

 private:
  struct Node {
    Node(std::string h, std::uint16_t p) : host(std::move(h)), port(p) {}
    const std::string host;
    const std::uint16_t port;
    std::shared_ptr<net::Connection> data;              // made on first use; under mutex_
    std::shared_ptr<net::Connection> shard_subscriber;  // sharded pub/sub; under mutex_
    // data.get() once data is set (and started): read without the mutex.
    std::atomic<net::Connection*> published{nullptr};
  };

  Node& node_locked(const std::string& host, std::uint16_t port);
  Node& first_seed_locked();
  net::Connection& connection_locked(Node& node);
  Node& node_of_slot_locked(std::uint16_t slot);
  void set_data_locked(Node& node, std::shared_ptr<net::Connection> c);
  void map_slot_locked(std::uint16_t slot, Node* node);
  bool install_locked(const std::vector<SlotRange>& ranges);  // true: moved
  bool unhealthy_locked() const;
  Node* subscriber_target_locked() const;  // where a stranded subscriber goes

  const ClientOptions& options_;
  Connector& connector_;

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Node>> nodes_;  // never shrinks: Node& stays valid
  // slot -> master; written under mutex_, read by data_for() without it.
  std::array<std::atomic<Node*>, kSlotCount> slots_{};
  std::shared_ptr<net::Connection> subscriber_;
  Node* subscriber_node_ = nullptr;
  std::vector<std::shared_ptr<net::Connection>> retired_;  // kept until close
  std::size_t map_cursor_ = 0;
  std::atomic<bool> closed_{false};  // written under mutex_
  bool mapped_ = false;
  bool subscriber_down_ = false;  // I/O thread (read under mutex_ there too)
};

}  // namespace distlock::topology
