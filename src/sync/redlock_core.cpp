#include "sync/redlock_core.hpp"

#include <cmath>
#include <set>

#include "distlock/error.hpp"
#include "net/server_identity.hpp"
#include "runtime/identity.hpp"
#include "sync/lock_keys.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {
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
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < uris.size(); ++i) {
    const std::string which = "node URI #" + std::to_string(i + 1);
    try {
      nodes.push_back(ClientOptions::from_uri(uris[i]));
    } catch (const Error& e) {
      // from_uri's message never contains the password; the URI might.
      bad(which + " does not parse: " + e.what());
    }
    // Without the db: two databases of one server are not independent masters.
    const std::string server = net::server_identity(nodes.back());
    if (auto [at, fresh] = seen.emplace(server, i); !fresh) {
      bad(which + " names the same server as node URI #" + std::to_string(at->second + 1) + " (" +
          server + "); Redlock needs independent masters");
    }
  }
  return nodes;
}

}  // namespace

RedlockHolding::RedlockHolding(std::shared_ptr<RedlockCore> c,
                               std::string lock_name,
                               std::chrono::milliseconds lease,
                               bool renewed)
    : runtime::LeaseState(lock_name,
                          runtime::random_token(),
                          lease,
                          renewed,
                          runtime::Renewal{runtime::Renewal::Kind::string_value, lock_name, {}, {}},
                          c->options.clock_drift_factor,
                          &c->options.on_lease_lost),
      core(std::move(c)) {}

RedlockCore::RedlockCore(std::vector<std::string> uris, RedlockOptions o) : options(validated(o)) {
  for (ClientOptions& node : parse_nodes(uris)) {
    // Validates the node's options (TLS files, ...): still no I/O.
    nodes_.push_back(make_redlock_node(std::move(node)));
  }
}

RedlockCore::~RedlockCore() {
  close();
}

void RedlockCore::start() {
  auto bound = std::chrono::milliseconds(0);
  for (const auto& node : nodes_) {
    node->start_in_background();
    bound = std::max(bound, node->options().connect_timeout);
  }
  // A background connect reports no failure, only success: poll briefly for
  // the nodes to come up so the first attempt does not count a node still
  // shaking hands as a vote against; a node that is down costs this wait
  // once, when the group is made.
  const auto deadline = RedlockClock::now() + bound;
  auto all_up = [&] {
    for (const auto& node : nodes_) {
      if (!node->topology().connected({})) return false;
    }
    return true;
  };
  while (!all_up() && RedlockClock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::vector<topology::Topology*> RedlockCore::topologies() const {
  std::vector<topology::Topology*> out;
  for (const auto& node : nodes_) out.push_back(&node->topology());
  return out;
}

std::shared_ptr<RedlockHolding> RedlockCore::thread_hold(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = threads_.find({name, std::this_thread::get_id()});
  return it == threads_.end() ? nullptr : it->second;
}

void RedlockCore::set_thread_hold(const std::string& name,
                                  std::shared_ptr<RedlockHolding> holding) {
  std::lock_guard lock(mutex_);
  threads_[{name, std::this_thread::get_id()}] = std::move(holding);
}

std::shared_ptr<RedlockHolding> RedlockCore::take_thread_hold(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto it = threads_.find({name, std::this_thread::get_id()});
  if (it == threads_.end()) return nullptr;
  auto holding = std::move(it->second);
  threads_.erase(it);
  return holding;
}

MetricsSnapshot RedlockCore::metrics_snapshot() const {
  MetricsSnapshot s = metrics.snapshot();
  for (const auto& node : nodes_) {
    const MetricsSnapshot n = node->metrics_snapshot();
    s.reconnects += n.reconnects;
    s.commands_in_flight += n.commands_in_flight;
  }
  return s;
}

bool RedlockCore::closed() const noexcept {
  std::lock_guard lock(mutex_);
  return closed_;
}

void RedlockCore::close() noexcept {
  std::vector<std::shared_ptr<RedlockHolding>> holds;
  std::thread watchdog;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    for (auto& [key, h] : threads_) holds.push_back(std::move(h));
    for (auto& [key, h] : watched_) holds.push_back(std::move(h));
    // Both maps hold holdings that hold this core: clearing them breaks
    // the cycle.
    threads_.clear();
    watched_.clear();
    watchdog = std::move(watchdog_);
  }
  wake_.notify_all();
  if (watchdog.joinable()) {
    // Closed from an on_lease_lost callback on the watchdog thread itself.
    if (watchdog.get_id() == std::this_thread::get_id()) {
      watchdog.detach();
    } else {
      watchdog.join();
    }
  }
  for (const auto& h : holds) {
    if (h->active.load() && !h->released.load())
      h->mark_lost(LeaseLostEvent::Reason::client_closed);
  }
  for (const auto& node : nodes_) node->close();
}

std::string redlock_channel(const std::string& name) {
  return simple_lock_channel(name);
}

}  // namespace distlock::sync
