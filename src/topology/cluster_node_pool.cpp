#include "topology/cluster_node_pool.hpp"

#include <algorithm>

namespace distlock::topology {

ClusterNodePool::ClusterNodePool(const ClientOptions& options, Connector& connector)
    : options_(options), connector_(connector) {}

ClusterNodePool::Node& ClusterNodePool::node_locked(const std::string& host, std::uint16_t port) {
  for (auto& n : nodes_) {
    if (n->port == port && n->host == host) return *n;
  }
  nodes_.push_back(std::make_unique<Node>(host, port));
  return *nodes_.back();
}

ClusterNodePool::Node& ClusterNodePool::first_seed_locked() {
  return node_locked(options_.seeds.front().host, options_.seeds.front().port);
}

net::Connection& ClusterNodePool::connection_locked(Node& node) {
  if (!node.data) {
    auto c = connector_.data_connection(node.host, node.port);
    if (!closed_.load(std::memory_order_relaxed)) c->start();
    set_data_locked(node, std::move(c));
  }
  return *node.data;
}

void ClusterNodePool::set_data_locked(Node& node, std::shared_ptr<net::Connection> c) {
  node.data = std::move(c);
  // Release: a reader that sees the pointer sees the started Connection.
  node.published.store(node.data.get(), std::memory_order_release);
}

void ClusterNodePool::map_slot_locked(std::uint16_t slot, Node* node) {
  // Release: a reader that sees the node sees its host, port and published.
  slots_[slot].store(node, std::memory_order_release);
}

net::Connection& ClusterNodePool::data_for(std::uint16_t slot) {
  // Every routed call comes here: no lock, no allocation, two loads. Node and
  // Connection outlive the pool's users (nodes_ never shrinks; a node's
  // connection is set once), so the pointers read stay valid.
  if (const Node* mapped = slots_[slot].load(std::memory_order_acquire)) {
    if (net::Connection* c = mapped->published.load(std::memory_order_acquire)) return *c;
  }
  // First use of the master's connection, or no master known for the slot.
  std::lock_guard lock(mutex_);
  return connection_locked(node_of_slot_locked(slot));
}

ClusterNodePool::Node& ClusterNodePool::node_of_slot_locked(std::uint16_t slot) {
  Node* n = slots_[slot].load(std::memory_order_relaxed);
  // Slot unknown (no map yet, or its master failed): any node; it answers
  // MOVED when another serves the slot.
  if (!n) n = nodes_.empty() ? &first_seed_locked() : nodes_.front().get();
  return *n;
}

net::Connection& ClusterNodePool::shard_subscriber(std::uint16_t slot) {
  std::lock_guard lock(mutex_);
  Node& n = node_of_slot_locked(slot);
  if (!n.shard_subscriber) {
    n.shard_subscriber = connector_.shard_subscriber_connection(n.host, n.port);
    if (!closed_.load(std::memory_order_relaxed)) n.shard_subscriber->start();
  }
  return *n.shard_subscriber;
}

void ClusterNodePool::retire_idle_shard_subscribers() {
  std::vector<std::shared_ptr<net::Connection>> idle;
  {
    std::lock_guard lock(mutex_);
    if (closed_.load(std::memory_order_relaxed)) return;
    for (auto& n : nodes_) {
      if (!n->shard_subscriber) continue;
      const bool masters_a_slot = std::any_of(slots_.begin(), slots_.end(), [&](const auto& s) {
        return s.load(std::memory_order_relaxed) == n.get();
      });
      if (masters_a_slot) continue;
      retired_.push_back(n->shard_subscriber);
      idle.push_back(std::move(n->shard_subscriber));
    }
  }
  for (auto& c : idle) c->close();
}

std::vector<net::Connection*> ClusterNodePool::masters() {
  std::lock_guard lock(mutex_);
  std::vector<net::Connection*> out;
  std::vector<const Node*> seen;
  for (const auto& slot : slots_) {
    Node* n = slot.load(std::memory_order_relaxed);
    if (!n || std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
    seen.push_back(n);
    out.push_back(&connection_locked(*n));
  }
  return out;
}

net::Connection& ClusterNodePool::subscriber() {
  std::lock_guard lock(mutex_);
  if (!subscriber_) {
    Node* n = nullptr;
    for (const auto& s : slots_) {
      n = s.load(std::memory_order_relaxed);
      if (n) break;
    }
    if (!n) n = &first_seed_locked();
    subscriber_node_ = n;
    subscriber_ = connector_.subscriber_connection(n->host, n->port, false);
    if (!closed_.load(std::memory_order_relaxed)) subscriber_->start();
  }
  return *subscriber_;
}

net::Connection* ClusterNodePool::follow(const ClusterRedirect& r) {
  std::lock_guard lock(mutex_);
  if (closed_.load(std::memory_order_relaxed)) return nullptr;
  Node& n = node_locked(r.host, r.port);
  if (r.kind == ClusterRedirect::Kind::moved) map_slot_locked(r.slot, &n);
  return &connection_locked(n);
}

bool ClusterNodePool::closed() const {
  return closed_.load(std::memory_order_acquire);
}

void ClusterNodePool::add_seeds() {
  std::lock_guard lock(mutex_);
  for (const auto& seed : options_.seeds) node_locked(seed.host, seed.port);
}

void ClusterNodePool::adopt(const std::vector<SlotRange>& ranges,
                            const std::string& host,
                            std::uint16_t port,
                            std::shared_ptr<net::Connection> connection) {
  std::lock_guard lock(mutex_);
  install_locked(ranges);
  Node& n = node_locked(host, port);
  if (!n.data) {
    set_data_locked(n, std::move(connection));
  } else {
    connection->close();
  }
}

net::Connection* ClusterNodePool::map_source() {
  std::lock_guard lock(mutex_);
  if (closed_.load(std::memory_order_relaxed) || nodes_.empty()) return nullptr;
  net::Connection* c = nullptr;
  const std::size_t n = nodes_.size();
  for (std::size_t i = 0; i < n && !c; ++i) {
    Node& node = *nodes_[(map_cursor_ + i) % n];
    if (node.data && node.data->connected()) c = node.data.get();
  }
  if (!c) c = &connection_locked(*nodes_[map_cursor_ % n]);
  ++map_cursor_;
  return c;
}

std::optional<ClusterNodePool::Installed> ClusterNodePool::install(
    const std::optional<std::vector<SlotRange>>& ranges) {
  std::lock_guard lock(mutex_);
  if (closed_.load(std::memory_order_relaxed)) return std::nullopt;
  Installed out;
  if (ranges) out.moved = install_locked(*ranges);
  out.unhealthy = !ranges || unhealthy_locked();
  return out;
}

bool ClusterNodePool::install_locked(const std::vector<SlotRange>& ranges) {
  bool changed = false;
  for (const auto& r : ranges) {
    Node& n = node_locked(r.host, r.port);
    for (unsigned s = r.first; s <= r.last; ++s) {
      const Node* was = slots_[s].load(std::memory_order_relaxed);
      if (was == &n) continue;
      if (was) changed = true;
      map_slot_locked(static_cast<std::uint16_t>(s), &n);
    }
  }
  const bool report = changed && mapped_;
  mapped_ = true;
  return report;
}

bool ClusterNodePool::unhealthy_locked() const {
  const Node* last = nullptr;
  for (const auto& slot : slots_) {
    const Node* s = slot.load(std::memory_order_relaxed);
    if (!s) return true;
    if (s == last) continue;
    last = s;
    if (s->data && !s->data->connected()) return true;
  }
  return false;
}

ClusterNodePool::Node* ClusterNodePool::subscriber_target_locked() const {
  bool still_master = false;
  Node* target = nullptr;
  for (const auto& slot : slots_) {
    Node* s = slot.load(std::memory_order_relaxed);
    if (s == subscriber_node_) still_master = true;
    if (!target && s && s != subscriber_node_ && s->data && s->data->connected()) target = s;
  }
  // Its master is only reconnecting: the connection resubscribes itself.
  if (still_master && subscriber_node_->data && subscriber_node_->data->connected()) {
    return nullptr;
  }
  return target;
}

void ClusterNodePool::move_subscriber_if_stranded() {
  std::shared_ptr<net::Connection> old;
  {
    std::lock_guard lock(mutex_);
    if (!subscriber_ || !subscriber_down_ || closed_.load(std::memory_order_relaxed)) return;
    Node* target = subscriber_target_locked();
    if (!target) return;
    old = subscriber_;
    retired_.push_back(old);
    subscriber_node_ = target;
    subscriber_down_ = false;
    subscriber_ = connector_.subscriber_connection(target->host, target->port, true);
    subscriber_->start();
  }
  old->close();
}

void ClusterNodePool::close() {
  std::vector<std::shared_ptr<net::Connection>> all;
  {
    std::lock_guard lock(mutex_);
    closed_.store(true, std::memory_order_release);
    for (auto& n : nodes_) {
      if (n->data) all.push_back(n->data);
      if (n->shard_subscriber) all.push_back(n->shard_subscriber);
    }
    if (subscriber_) all.push_back(subscriber_);
    all.insert(all.end(), retired_.begin(), retired_.end());
  }
  for (auto& c : all) c->close();
}

std::size_t ClusterNodePool::outstanding() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (auto& node : nodes_) {
    if (node->data) n += node->data->outstanding();
  }
  return n;
}

}  // namespace distlock::topology
