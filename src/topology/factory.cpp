#include "topology/factory.hpp"

#include "distlock/error.hpp"
#include "topology/cluster.hpp"
#include "topology/sentinel.hpp"
#include "topology/standalone.hpp"

namespace distlock::topology {

std::unique_ptr<Topology> make_topology(asio::io_context& io,
                                        const ClientOptions& options,
                                        asio::ssl::context* tls,
                                        net::Connection::Handlers data_handlers,
                                        net::Connection::Handlers subscriber_handlers) {
  switch (options.deployment) {
    case ClientOptions::Deployment::standalone:
      return std::make_unique<Standalone>(io, options, tls, std::move(data_handlers),
                                          std::move(subscriber_handlers));
    case ClientOptions::Deployment::cluster:
      return std::make_unique<Cluster>(io, options, tls, std::move(data_handlers),
                                       std::move(subscriber_handlers));
    case ClientOptions::Deployment::sentinel:
      return std::make_unique<Sentinel>(io, options, tls, std::move(data_handlers),
                                        std::move(subscriber_handlers));
  }
  throw Error(errc::invalid_argument, "ClientOptions: unknown deployment");
}

}  // namespace distlock::topology
