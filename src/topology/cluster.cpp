#include "topology/cluster.hpp"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <optional>

#include "distlock/error.hpp"
#include "resp/encoder.hpp"

namespace distlock::topology {
namespace {

constexpr unsigned kMaxRedirects = 5;
constexpr std::chrono::milliseconds kRefreshWhileUnhealthy{250};

// A completion that runs a function once and deletes itself.
class OnReply final : public net::Completion {
 public:
  explicit OnReply(std::function<void(std::error_code, Value)> f) : f_(std::move(f)) {}
  void complete(std::error_code ec, Value reply) override {
    std::unique_ptr<OnReply> self(this);
    f_(ec, std::move(reply));
  }

 private:
  std::function<void(std::error_code, Value)> f_;
};

std::string encoded(std::initializer_list<std::string_view> args) {
  std::string payload;
  resp::encode_command(payload, std::span<const std::string_view>(args.begin(), args.size()));
  return payload;
}

// CLUSTER SHARDS refused in a way that CLUSTER SLOTS may not be: a server
// older than 7.0 does not know it, and an ACL may allow cluster|slots but not
// cluster|shards (NOPERM), as some managed services do.
bool slots_instead(const Value& reply) {
  if (!reply.is_error()) return false;
  const std::string& e = reply.as_string();
  return e.find("nknown subcommand") != std::string::npos ||
         e.find("nknown command") != std::string::npos || e.starts_with("NOPERM");
}

std::string address(const std::string& host, std::uint16_t port) {
  return host + ":" + std::to_string(port);
}

// A plain command under Cluster: keeps its arguments so it can be sent again
// after MOVED / ASK / a transient refusal (each means it did not run).
class RoutedCommand final : public net::Completion {
 public:
  RoutedCommand(net::Router& router,
                std::string route_key,
                std::span<const std::string_view> args,
                net::Completion* next)
      : router_(router),
        route_key_(std::move(route_key)),
        args_(args.begin(), args.end()),
        next_(next) {}

  std::error_code send(net::Connection& connection) {
    std::string payload;
    if (asking_) resp::encode_command(payload, std::array<std::string_view, 1>{"ASKING"});
    std::vector<std::string_view> views(args_.begin(), args_.end());
    resp::encode_command(payload, views);
    return connection.submit(std::move(payload), asking_ ? 2 : 1, this);
  }

  void complete(std::error_code ec, Value reply) override {
    if (asking_ && !ec && reply.is_array()) {
      auto parts = std::move(reply.as_array());
      reply = parts.size() == 2 ? std::move(parts[1]) : Value::error("ERR no reply after ASKING");
    }
    if (!ec && reply.is_error()) {
      if (auto to = router_.resend(reply, route_key_, redirects_, waited_)) {
        ++redirects_;
        asking_ = to->asking;
        if (to->delay.count() <= 0) return resend(*to->connection);
        waited_ += to->delay;
        auto* c = to->connection;
        return router_.after(to->delay, [this, c](bool ok) {
          if (!ok) return finish(errc::closed, {});
          resend(*c);
        });
      }
    }
    finish(ec, std::move(reply));
  }

 private:
  void resend(net::Connection& c) {
    if (auto e = send(c)) finish(e, {});
  }
  void finish(std::error_code ec, Value reply) {
    std::unique_ptr<RoutedCommand> self(this);
    next_->complete(ec, std::move(reply));
  }

  net::Router& router_;
  std::string route_key_;
  std::vector<std::string> args_;
  net::Completion* next_;
  bool asking_ = false;
  unsigned redirects_ = 0;
  std::chrono::milliseconds waited_{0};
};

}  // namespace

Cluster::Cluster(asio::io_context& io,
                 const ClientOptions& options,
                 asio::ssl::context* tls,
                 net::Connection::Handlers data_handlers,
                 net::Connection::Handlers subscriber_handlers)
    : io_(io),
      options_(options),
      tls_(tls),
      data_handlers_(std::move(data_handlers)),
      subscriber_handlers_(std::move(subscriber_handlers)) {}

Cluster::~Cluster() = default;

std::shared_ptr<net::Connection> Cluster::make_connection(const std::string& host,
                                                          std::uint16_t port,
                                                          net::Connection::Role role) {
  ClientOptions o = options_;
  o.host = host;
  o.port = port;
  o.unix_path.clear();
  o.db = 0;
  net::Connection::Handlers h;
  if (role == net::Connection::Role::data) {
    h = data_handlers_;
    h.on_disconnected = [this, original = data_handlers_.on_disconnected] {
      if (original) original();
      refresh();  // a master gone: find who serves its slots now
    };
    h.on_connect_failed = [this] { refresh(); };  // never reached, or not back
  } else {
    h = subscriber_handlers_;
    const bool replacement = subscriber_ != nullptr;
    h.on_connected = [this, replacement](bool reconnected) {
      subscriber_down_ = false;
      // A replacement subscriber must subscribe every channel again.
      subscriber_handlers_.on_connected(reconnected || replacement);
    };
    h.on_disconnected = [this] {
      subscriber_down_ = true;
      if (subscriber_handlers_.on_disconnected) subscriber_handlers_.on_disconnected();
      refresh();
    };
    h.on_connect_failed = [this] {
      subscriber_down_ = true;
      refresh();
    };
  }
  return std::make_shared<net::Connection>(io_, o, tls_, role, std::move(h));
}

Cluster::Node& Cluster::node_locked(const std::string& host, std::uint16_t port) {
  for (auto& n : nodes_) {
    if (n->port == port && n->host == host) return *n;
  }
  nodes_.push_back(std::make_unique<Node>(Node{host, port, nullptr}));
  return *nodes_.back();
}

net::Connection& Cluster::connection_locked(Node& node) {
  if (!node.data) {
    node.data = make_connection(node.host, node.port, net::Connection::Role::data);
    if (!closed_) node.data->start();
  }
  return *node.data;
}

net::Connection& Cluster::data_for(std::string_view key) {
  std::lock_guard lock(mutex_);
  Node* n = slots_[key_slot(key)];
  if (!n) {
    // Slot unknown (no map yet, or its master failed): any node; it answers
    // MOVED when another serves the slot.
    n = nodes_.empty() ? &node_locked(options_.seeds.front().host, options_.seeds.front().port)
                       : nodes_.front().get();
  }
  return connection_locked(*n);
}

net::Connection& Cluster::subscriber_for(std::string_view) {
  std::lock_guard lock(mutex_);
  if (!subscriber_) {
    Node* n = nullptr;
    for (auto* s : slots_) {
      if (s) {
        n = s;
        break;
      }
    }
    if (!n) n = &node_locked(options_.seeds.front().host, options_.seeds.front().port);
    subscriber_node_ = n;
    subscriber_ = make_connection(n->host, n->port, net::Connection::Role::subscriber);
    if (!closed_) subscriber_->start();
  }
  return *subscriber_;
}

std::error_code Cluster::command(std::string_view route_key,
                                 std::span<const std::string_view> args,
                                 net::Completion* completion) {
  auto* routed = new RoutedCommand(*this, std::string(route_key), args, completion);
  const auto ec = routed->send(data_for(route_key));
  if (ec) delete routed;
  return ec;
}

std::optional<net::Resend> Cluster::resend(const Value& reply,
                                           std::string_view route_key,
                                           unsigned redirects,
                                           std::chrono::milliseconds waited) {
  if (auto r = parse_redirection(reply)) {
    if (redirects >= kMaxRedirects) return std::nullopt;
    net::Connection* c = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return std::nullopt;
      Node& n = node_locked(r->host, r->port);
      if (!r->ask) slots_[r->slot] = &n;
      c = &connection_locked(n);
    }
    if (!r->ask) asio::post(io_, [this] { refresh(); });  // the rest of the map moved too
    return net::Resend{c, r->ask, std::chrono::milliseconds(0)};
  }
  if (!is_transient_refusal(reply)) return std::nullopt;
  const auto delay =
      std::chrono::milliseconds(std::min<unsigned>(200, 10u << std::min(redirects, 5u)));
  if (waited + delay > options_.command_timeout) return std::nullopt;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return std::nullopt;
  }
  asio::post(io_, [this] { refresh(); });
  return net::Resend{&data_for(route_key), false, delay};
}

void Cluster::after(std::chrono::milliseconds delay, std::function<void(bool)> f) {
  auto timer = std::make_shared<asio::steady_timer>(io_, delay);
  timer->async_wait([this, timer, f = std::move(f)](std::error_code ec) {
    bool closed;
    {
      std::lock_guard lock(mutex_);
      closed = closed_;
    }
    f(!ec && !closed);
  });
}

namespace {

Value ask_blocking(net::Connection& c, std::string_view what, std::error_code& ec) {
  net::SyncCompletion done;
  if (auto e = c.submit(encoded({"CLUSTER", what}), 1, &done)) {
    ec = e;
    return {};
  }
  return done.wait(ec);
}

void append(std::string& list, const std::string& item) {
  if (!list.empty()) list += "; ";
  list += item;
}

}  // namespace

void Cluster::connect() {
  std::string failures;
  for (const auto& seed : options_.seeds) {
    const std::string where = address(seed.host, seed.port);
    auto conn = make_connection(seed.host, seed.port, net::Connection::Role::data);
    std::error_code ec;
    std::string message;
    conn->connect(ec, message);
    if (ec) {
      append(failures, where + ": " + message);
      continue;
    }
    bool shards = true;
    Value reply = ask_blocking(*conn, "SHARDS", ec);
    if (!ec && slots_instead(reply)) {
      shards = false;
      reply = ask_blocking(*conn, "SLOTS", ec);
    }
    if (ec || reply.is_error()) {
      conn->close();
      const std::string why = ec ? ec.message() : reply.as_string();
      if (!ec && why.find("cluster support disabled") != std::string::npos) {
        throw Error(errc::invalid_argument,
                    "Redis Cluster: seed " + where + " is not a cluster node (" + why + ")");
      }
      append(failures, where + ": CLUSTER " + (shards ? "SHARDS" : "SLOTS") + ": " + why);
      continue;
    }
    const auto ranges = shards ? parse_cluster_shards(reply) : parse_cluster_slots(reply);
    if (!ranges) {
      conn->close();
      append(failures, where + ": an unexpected CLUSTER reply");
      continue;
    }
    if (const auto slot = first_uncovered_slot(*ranges)) {
      conn->close();
      throw Error(errc::connection_failed, "Redis Cluster at " + where +
                                               ": no master serves slot " + std::to_string(*slot) +
                                               " (CLUSTERDOWN: the cluster is down or not set up)");
    }
    std::lock_guard lock(mutex_);
    install_locked(*ranges);
    Node& n = node_locked(seed.host, seed.port);
    if (!n.data) {
      n.data = std::move(conn);
    } else {
      conn->close();
    }
    return;
  }
  throw Error(errc::connection_failed, "Redis Cluster: no seed answered (" + failures + ")");
}

void Cluster::connect_in_background() {
  {
    std::lock_guard lock(mutex_);
    for (const auto& seed : options_.seeds) node_locked(seed.host, seed.port);
  }
  asio::post(io_, [this] { refresh(); });
}

void Cluster::close() {
  std::vector<std::shared_ptr<net::Connection>> all;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    for (auto& n : nodes_) {
      if (n->data) all.push_back(n->data);
    }
    if (subscriber_) all.push_back(subscriber_);
    all.insert(all.end(), retired_.begin(), retired_.end());
  }
  for (auto& c : all) c->close();
  asio::post(io_, [this] {
    if (refresh_timer_) refresh_timer_->cancel();
  });
}

std::size_t Cluster::outstanding() {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (auto& node : nodes_) {
    if (node->data) n += node->data->outstanding();
  }
  return n;
}

bool Cluster::install_locked(const std::vector<SlotRange>& ranges) {
  bool changed = false;
  for (const auto& r : ranges) {
    Node& n = node_locked(r.host, r.port);
    for (unsigned s = r.first; s <= r.last; ++s) {
      if (slots_[s] == &n) continue;
      if (slots_[s]) changed = true;
      slots_[s] = &n;
    }
  }
  const bool report = changed && mapped_;
  mapped_ = true;
  return report;
}

bool Cluster::unhealthy_locked() const {
  const Node* last = nullptr;
  for (const Node* s : slots_) {
    if (!s) return true;
    if (s == last) continue;
    last = s;
    if (s->data && !s->data->connected()) return true;
  }
  return false;
}

void Cluster::refresh() {
  if (refreshing_) {
    refresh_again_ = true;
    return;
  }
  net::Connection* c = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (closed_ || nodes_.empty()) return;
    // A connected node if there is one; else the next node in turn, so a
    // dead node (often the seed this Client knew first) cannot be the only
    // one ever asked.
    const std::size_t n = nodes_.size();
    for (std::size_t i = 0; i < n && !c; ++i) {
      Node& node = *nodes_[(refresh_cursor_ + i) % n];
      if (node.data && node.data->connected()) c = node.data.get();
    }
    if (!c) c = &connection_locked(*nodes_[refresh_cursor_ % n]);
    ++refresh_cursor_;
  }
  refreshing_ = true;
  ask(*c, true);
}

void Cluster::ask(net::Connection& c, bool shards) {
  auto* done = new OnReply([this, &c, shards](std::error_code ec, Value reply) {
    if (!ec && shards && slots_instead(reply)) return ask(c, false);
    on_map(ec, reply, shards);
  });
  if (c.submit(encoded({"CLUSTER", shards ? "SHARDS" : "SLOTS"}), 1, done)) {
    delete done;
    refreshing_ = false;
  }
}

void Cluster::on_map(std::error_code ec, const Value& reply, bool shards) {
  refreshing_ = false;
  std::optional<std::vector<SlotRange>> ranges;
  if (!ec) ranges = shards ? parse_cluster_shards(reply) : parse_cluster_slots(reply);
  bool changed = false;
  bool unhealthy = true;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    if (ranges) changed = install_locked(*ranges);
    unhealthy = !ranges || unhealthy_locked();
  }
  // Slots moved to another master: check every lease now (a failover may
  // have lost keys), and send pending releases again.
  if (changed && data_handlers_.on_connected) data_handlers_.on_connected(true);
  check_subscriber();
  if (refresh_again_) {
    refresh_again_ = false;
    return refresh();
  }
  if (unhealthy) refresh_soon();
}

void Cluster::refresh_soon() {
  if (refresh_scheduled_) return;
  refresh_scheduled_ = true;
  if (!refresh_timer_) refresh_timer_ = std::make_shared<asio::steady_timer>(io_);
  refresh_timer_->expires_after(kRefreshWhileUnhealthy);
  refresh_timer_->async_wait([this](std::error_code ec) {
    refresh_scheduled_ = false;
    if (!ec) refresh();
  });
}

void Cluster::check_subscriber() {
  std::shared_ptr<net::Connection> old;
  {
    std::lock_guard lock(mutex_);
    if (!subscriber_ || !subscriber_down_ || closed_) return;
    bool still_master = false;
    Node* target = nullptr;
    for (Node* s : slots_) {
      if (s == subscriber_node_) still_master = true;
      if (!target && s && s != subscriber_node_ && s->data && s->data->connected()) target = s;
    }
    // Its master is only reconnecting: the connection resubscribes itself.
    if (still_master && subscriber_node_->data && subscriber_node_->data->connected()) return;
    if (!target) return;
    old = subscriber_;
    retired_.push_back(old);
    subscriber_node_ = target;
    subscriber_down_ = false;
    subscriber_ = make_connection(target->host, target->port, net::Connection::Role::subscriber);
    subscriber_->start();
  }
  old->close();
}

}  // namespace distlock::topology
