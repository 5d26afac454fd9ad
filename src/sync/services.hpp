// What a primitive uses of its Client, each part by reference: the topology
// that routes its calls, the watchdog, the waiters, the pending releases, the
// semaphores' per-Client states, the executor, the options and the client id. ClientImpl assembles
// it from the parts it owns; no part refers back to it or to ClientImpl.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "distlock/client_options.hpp"
#include "distlock/value.hpp"

namespace distlock::topology {
class Topology;
}
namespace distlock::runtime {
class Executor;
class Waiters;
class Watchdog;
class Metrics;
class LongHoldMonitor;
}  // namespace distlock::runtime
namespace distlock::detail {
class ClientImpl;
}
namespace distlock::backend {
class Backend;
}

namespace distlock::sync {

class PendingReleases;
class SemaphoreRegistry;

struct Services {
  const ClientOptions& options;
  const std::string& client_id;
  runtime::Executor& executor;
  topology::Topology& topology;
  runtime::Watchdog& watchdog;
  runtime::Waiters& waiters;
  PendingReleases& pending_releases;
  runtime::Metrics& metrics;
  runtime::LongHoldMonitor& long_holds;  // I/O thread only
  SemaphoreRegistry& semaphores;

  // One command, blocking, routed by its first argument after the verb (the
  // key, for every key-taking command a primitive sends). Sets ec: closed,
  // invalid_argument (empty, or on the I/O thread), timeout,
  // connection_lost, server_error (the reply is the error).
  Value call(std::span<const std::string_view> args, std::error_code& ec) const;
};

// The services of `client`, sharing its ownership (so a holding keeps its
// Client's parts alive). Defined with ClientImpl.
std::shared_ptr<Services> services_of(const std::shared_ptr<detail::ClientImpl>& client);
// The services of `client` for a factory of the primitive `what` ("fair
// lock"): throws Error(closed) for a moved-from Client, and
// Error(not_supported) naming the backend and `what` for a Client of another
// backend (they have no Redis services). No I/O.
// The backend of a non-Redis `client` (ClientOptions::backend); null for
// Redis.
backend::Backend* backend_of(const std::shared_ptr<detail::ClientImpl>& client);
std::shared_ptr<Services> services_for(const std::shared_ptr<detail::ClientImpl>& client,
                                       std::string_view what);

}  // namespace distlock::sync
