// Picks the Topology for ClientOptions::deployment.
#pragma once

#include <memory>

#include "net/connection.hpp"
#include "topology/topology.hpp"

namespace distlock::topology {

// Standalone, Cluster or Sentinel, as `options.deployment` says. No I/O yet.
// `data_handlers` go to every data connection the topology makes (one per
// master under Cluster), `subscriber_handlers` to its pub/sub connection.
// Throws Error(invalid_argument) for a deployment this build cannot serve.
std::unique_ptr<Topology> make_topology(asio::io_context& io,
                                        const ClientOptions& options,
                                        asio::ssl::context* tls,
                                        net::Connection::Handlers data_handlers,
                                        net::Connection::Handlers subscriber_handlers);

}  // namespace distlock::topology
