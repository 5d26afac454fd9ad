// RedlockGroup: a ClientImpl whose topology is a Quorum of the masters, so a
// RedlockLock is a Lock over the group (RedlockPrimitive), and the group's
// holds are the Client machinery's. Here, above the layers, because it
// assembles a ClientImpl, as Client does.
#include <thread>

#include "client_options.hpp"
#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "net/server_identity.hpp"
#include "redlock_group_state.hpp"
#include "sync/redlock_primitive.hpp"
#include "sync/redlock_rules.hpp"
#include "sync/services.hpp"
#include "topology/quorum.hpp"

namespace distlock {
namespace {

[[noreturn]] void bad(const std::string& what) {
  throw Error(errc::invalid_argument, "RedlockGroup: " + what);
}

const RedlockOptions& validated(const RedlockOptions& o) {
  using std::chrono::milliseconds;
  if (o.lease < milliseconds(30)) {
    bad("lease must be at least 30 ms (the watchdog extends every third), got " +
        std::to_string(o.lease.count()) + " ms");
  }
  if (o.node_timeout <= milliseconds(0) || o.node_timeout >= o.lease) {
    bad("node_timeout must be positive and below the lease, got " +
        std::to_string(o.node_timeout.count()) + " ms");
  }
  if (!(o.clock_drift_factor >= 0.0 && o.clock_drift_factor < 1.0)) {
    bad("clock_drift_factor must be in [0, 1), got " + std::to_string(o.clock_drift_factor));
  }
  if (o.retry_delay <= milliseconds(0)) bad("retry_delay must be positive");
  if (o.retry_jitter < milliseconds(0)) bad("retry_jitter must not be negative");
  return o;
}

std::vector<ClientOptions> parse_nodes(const std::vector<std::string>& uris) {
  if (uris.empty()) bad("the list of node URIs is empty (Redlock needs at least one master)");
  std::vector<ClientOptions> nodes;
  std::vector<net::ServerIdentity> seen;
  for (std::size_t i = 0; i < uris.size(); ++i) {
    const std::string which = "node URI #" + std::to_string(i + 1);
    try {
      nodes.push_back(ClientOptions::from_uri(uris[i]));
    } catch (const Error& e) {
      // from_uri's message never contains the password; the URI might.
      bad(which + " does not parse: " + e.what());
    }
    if (nodes.back().backend != ClientOptions::Backend::redis) {
      throw Error(errc::not_supported, "RedlockGroup: " + which +
                                           " is not a Redis URI; Redlock runs over independent "
                                           "Redis masters only (docs/backends.md)");
    }
    validate(nodes.back());  // TLS files and the like, as a Client's
    // Without the db: two databases of one server are not independent
    // masters. By resolved address: "localhost" and 127.0.0.1 are one.
    seen.push_back(net::resolve_server_identity(nodes.back()));
    for (std::size_t j = 0; j + 1 < seen.size(); ++j) {
      if (seen[j].same_server(seen.back())) {
        bad(which + " names the same server as node URI #" + std::to_string(j + 1) + " (" +
            seen.back().text + "); Redlock needs independent masters");
      }
    }
  }
  return nodes;
}

// The group's Client options: the first node's connection settings, the
// group's lease, drift and lease-lost callback.
ClientOptions group_options(const ClientOptions& first, const RedlockOptions& o) {
  ClientOptions g = first;
  g.watchdog_timeout = o.lease;
  g.clock_drift_factor = o.clock_drift_factor;
  g.on_lease_lost = o.on_lease_lost;
  g.min_replicas_acked = 0;
  return g;
}

std::shared_ptr<detail::RedlockGroupState> make_group(std::vector<std::string> uris,
                                                      RedlockOptions options) {
  auto state = std::make_shared<detail::RedlockGroupState>();
  state->options = validated(options);
  std::vector<ClientOptions> nodes = parse_nodes(uris);
  const ClientOptions client_options = group_options(nodes.front(), state->options);
  auto connect_for = std::chrono::milliseconds(0);
  for (const auto& n : nodes) connect_for = std::max(connect_for, n.connect_timeout);
  topology::Quorum* quorum = nullptr;
  state->client = std::make_shared<detail::ClientImpl>(
      client_options, [&](asio::io_context& io, asio::ssl::context*, net::Connection::Handlers data,
                          net::Connection::Handlers subscriber) {
        auto q = std::make_unique<topology::Quorum>(io, std::move(nodes),
                                                    state->options.node_timeout, data, subscriber);
        sync::install_redlock_rules(*q);
        quorum = q.get();
        return q;
      });
  state->quorum = quorum;
  // Every node connects in the background; wait for all of them, at most
  // the longest connect_timeout: a node still down then votes against.
  state->client->start_in_background();
  const auto deadline = std::chrono::steady_clock::now() + connect_for;
  while (!quorum->all_connected({}) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return state;
}

}  // namespace

MetricsSnapshot detail::RedlockGroupState::metrics() const {
  MetricsSnapshot s = client->metrics_snapshot();
  s.client_id.clear();
  return s;
}

RedlockGroup::RedlockGroup(std::vector<std::string> uris, RedlockOptions options)
    : state_(make_group(std::move(uris), std::move(options))) {}

RedlockGroup::~RedlockGroup() {
  if (state_) state_->client->close();
}

RedlockGroup::RedlockGroup(RedlockGroup&&) noexcept = default;

RedlockGroup& RedlockGroup::operator=(RedlockGroup&& other) noexcept {
  if (this != &other) {
    if (state_) state_->client->close();
    state_ = std::move(other.state_);
  }
  return *this;
}

RedlockLock RedlockGroup::lock(std::string name) {
  if (!state_) throw Error(errc::closed, "RedlockGroup: moved from");
  const RedlockOptions& o = state_->options;
  auto primitive = std::make_shared<const sync::RedlockPrimitive>(std::move(name), o.retry_delay,
                                                                  o.retry_jitter);
  return RedlockLock(detail::Access::lock(sync::services_of(state_->client), std::move(primitive)));
}

std::size_t RedlockGroup::size() const noexcept {
  return state_ ? state_->quorum->size() : 0;
}

std::size_t RedlockGroup::quorum() const noexcept {
  return state_ ? state_->quorum->quorum() : 0;
}

const RedlockOptions& RedlockGroup::options() const noexcept {
  static const RedlockOptions defaults;
  return state_ ? state_->options : defaults;
}

MetricsSnapshot RedlockGroup::metrics() const {
  return state_ ? state_->metrics() : MetricsSnapshot{};
}

void RedlockGroup::close() noexcept {
  if (state_) state_->client->close();
}

bool RedlockGroup::closed() const noexcept {
  return !state_ || state_->client->closed();
}

// --- RedlockLock's local views of this thread's hold ----------------------------

bool RedlockLock::is_held_by_current_thread() const noexcept {
  try {
    return Lock::lease_valid();
  } catch (...) {
    return false;
  }
}

std::stop_token RedlockLock::stop_token() const noexcept {
  try {
    return Lock::stop_token();
  } catch (...) {
    return {};
  }
}

std::optional<std::chrono::steady_clock::time_point> RedlockLock::lease_deadline() const noexcept {
  try {
    return Lock::lease_deadline();
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace distlock
