// One master of a RedlockGroup, seen through what the group uses of it: a
// Client's parts of its own (connection, I/O thread, metrics), made by
// make_redlock_node. The group reaches the node's server only through its
// topology, so it needs nothing of how a Client is assembled.
#pragma once

#include <memory>

#include "distlock/client_options.hpp"
#include "distlock/metrics.hpp"

namespace distlock::topology {
class Topology;
}

namespace distlock::sync {

class RedlockNode {
 public:
  virtual ~RedlockNode() = default;

  // Starts the node's I/O thread and connects in the background: never
  // throws for an unreachable server; calls queue until the connection is
  // up, and failed connects retry with backoff until close().
  virtual void start_in_background() = 0;
  // Stops the I/O thread and closes the connection. Idempotent.
  virtual void close() noexcept = 0;

  virtual const ClientOptions& options() const noexcept = 0;
  // Where the group's fan-outs go. Valid until the node is destroyed.
  virtual topology::Topology& topology() noexcept = 0;
  // The node's metrics as Client::metrics() reports them. Any thread.
  virtual MetricsSnapshot metrics_snapshot() const = 0;
};

// A node for the master `options` names. Validates the options (throws
// Error(invalid_argument), as a Client would) and prepares TLS; no I/O until
// start_in_background(). Defined with ClientImpl, as services_of is.
std::unique_ptr<RedlockNode> make_redlock_node(ClientOptions options);

}  // namespace distlock::sync
