// Fetching the Cluster's slot map again in the background: when a node
// answers MOVED or a transient refusal, when a master's connection drops or
// cannot be made, and every 250 ms while the map is unhealthy.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <functional>
#include <memory>

#include "distlock/value.hpp"
#include "net/connection.hpp"
#include "topology/cluster_node_pool.hpp"

namespace distlock::topology {

// One CLUSTER SHARDS at a time (CLUSTER SLOTS when SHARDS is refused, see
// cluster_slots_instead), sent to the pool's map_source(). A refresh asked
// for while one is in flight runs once after it. The reply is installed in
// the pool; when it moved a slot to another master `on_moved` runs (the
// Cluster checks every lease then), and a stranded pub/sub connection is
// moved. While the map is unhealthy (a reply that does not parse, a slot
// without master, a mapped master not connected) it is asked again every
// 250 ms, so a promoted replica is found about when the cluster promotes it.
//
// Thread safety: refresh() and the callbacks run on the I/O thread; stop()
// from any thread.
class ClusterMapRefresh {
 public:
  ClusterMapRefresh(asio::io_context& io, ClusterNodePool& pool, std::function<void()> on_moved);

  // Asks for the map now, or once the refresh in flight has answered. Does
  // nothing once the pool is closed. I/O thread.
  void refresh();
  // Cancels the unhealthy-map timer (on the I/O thread, later).
  void stop();

 private:
  void ask(net::Connection& c, bool shards);  // CLUSTER SHARDS, or SLOTS
  void on_map(std::error_code ec, const Value& reply, bool shards);
  void refresh_soon();

  asio::io_context& io_;
  ClusterNodePool& pool_;
  std::function<void()> on_moved_;

  bool refreshing_ = false;
  bool refresh_again_ = false;
  bool refresh_scheduled_ = false;
  std::shared_ptr<asio::steady_timer> timer_;
};

}  // namespace distlock::topology
