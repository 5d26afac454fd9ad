#include "topology/cluster.hpp"

#include <array>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <charconv>

#include "distlock/error.hpp"
#include "net/detached_call.hpp"
#include "resp/encoder.hpp"
#include "script/scripts.hpp"
#include "topology/routed_command.hpp"

namespace distlock::topology {
namespace {

std::string address(const std::string& host, std::uint16_t port) {
  return host + ":" + std::to_string(port);
}

void append(std::string& list, const std::string& item) {
  if (!list.empty()) list += "; ";
  list += item;
}

Value ask_blocking(net::Connection& c, std::string_view what, std::error_code& ec) {
  std::string payload;
  resp::encode_command(payload, std::array<std::string_view, 2>{"CLUSTER", what});
  net::SyncCompletion done;
  if (auto e = c.submit(std::move(payload), 1, &done)) {
    ec = e;
    return {};
  }
  return done.wait(ec);
}

// A blocking CLUSTER SHARDS, or SLOTS when SHARDS is refused.
struct MapReply {
  Value reply;
  bool shards = true;
};
MapReply ask_map_blocking(net::Connection& c, std::error_code& ec) {
  MapReply m{ask_blocking(c, "SHARDS", ec)};
  if (!ec && cluster_slots_instead(m.reply)) {
    m.shards = false;
    m.reply = ask_blocking(c, "SLOTS", ec);
  }
  return m;
}

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
      subscriber_handlers_(std::move(subscriber_handlers)),
      pool_(options_, *this),
      refresh_(io_, pool_, [this] { on_moved(); }) {}

Cluster::~Cluster() = default;

void Cluster::on_moved() {
  // Every lease is checked at once (a holder whose key did not survive the
  // failover is told then).
  if (data_handlers_.on_connected) data_handlers_.on_connected(true);
  if (!sharded()) return;
  // Shard channels follow their slots: subscribe each where it lives now.
  pool_.retire_idle_shard_subscribers();
  if (subscriber_handlers_.on_connected) subscriber_handlers_.on_connected(true);
}

ClientOptions Cluster::options_for(const std::string& host, std::uint16_t port) const {
  ClientOptions o = options_;
  o.host = host;
  o.port = port;
  o.unix_path.clear();
  o.db = 0;
  return o;
}

std::shared_ptr<net::Connection> Cluster::data_connection(const std::string& host,
                                                          std::uint16_t port) {
  net::Connection::Handlers h = data_handlers_;
  h.on_disconnected = [this, original = data_handlers_.on_disconnected] {
    if (original) original();
    refresh_.refresh();  // a master gone: find who serves its slots now
  };
  h.on_connect_failed = [this] { refresh_.refresh(); };  // never reached, or not back
  if (sharded()) {
    // The sharded twins go with the scripts, so the first SPUBLISH of each
    // does not meet NOSCRIPT (the seed's connection, made before the mode
    // was known, loads them on first use).
    for (const script::Script* twin : script::sharded_twins()) {
      h.preload.push_back({"SCRIPT", "LOAD", std::string(twin->source)});
    }
  }
  return std::make_shared<net::Connection>(io_, options_for(host, port), tls_,
                                           net::Connection::Role::data, std::move(h));
}

std::shared_ptr<net::Connection> Cluster::shard_subscriber_connection(const std::string& host,
                                                                      std::uint16_t port) {
  net::Connection::Handlers h = subscriber_handlers_;
  // Its first connect: the subscribes queued on it go out. After a drop the
  // channels on it are lost until it is back, or until the map moves them:
  // every channel is subscribed again then (those on other shards are
  // merely confirmed again, which wakes their waiters for one more read).
  h.on_connected = [this](bool reconnected) {
    if (reconnected && subscriber_handlers_.on_connected) subscriber_handlers_.on_connected(true);
  };
  h.on_disconnected = [this] {
    if (subscriber_handlers_.on_connected) subscriber_handlers_.on_connected(true);
    refresh_.refresh();
  };
  h.on_connect_failed = [this] { refresh_.refresh(); };
  return std::make_shared<net::Connection>(io_, options_for(host, port), tls_,
                                           net::Connection::Role::subscriber, std::move(h));
}

std::shared_ptr<net::Connection> Cluster::subscriber_connection(const std::string& host,
                                                                std::uint16_t port,
                                                                bool replacement) {
  net::Connection::Handlers h = subscriber_handlers_;
  h.on_connected = [this, replacement](bool reconnected) {
    pool_.subscriber_up();
    // A replacement subscriber must subscribe every channel again.
    subscriber_handlers_.on_connected(reconnected || replacement);
  };
  h.on_disconnected = [this] {
    pool_.subscriber_down();
    if (subscriber_handlers_.on_disconnected) subscriber_handlers_.on_disconnected();
    refresh_.refresh();
  };
  h.on_connect_failed = [this] {
    pool_.subscriber_down();
    refresh_.refresh();
  };
  return std::make_shared<net::Connection>(io_, options_for(host, port), tls_,
                                           net::Connection::Role::subscriber, std::move(h));
}

net::Connection& Cluster::data_for(std::string_view key) {
  return pool_.data_for(key_slot(key));
}

net::Connection& Cluster::subscriber_for(std::string_view) {
  return pool_.subscriber();
}

bool Cluster::sharded_publish(std::string_view route_key) const {
  return sharded() && channels_share_slot(route_key);
}

std::vector<Topology::ChannelRoute> Cluster::channel_routes(std::string_view channel,
                                                            std::string_view route_key) {
  if (sharded_publish(route_key)) return {{&pool_.shard_subscriber(key_slot(channel)), true}};
  return {{&pool_.subscriber(), false}};
}

Topology::Refusal Cluster::subscribe_refused(const Value& reply) {
  const ClusterRedirect r = ClusterRedirect::classify(reply);
  if (r.kind == ClusterRedirect::Kind::moved) {
    if (!pool_.follow(r)) return Refusal::fail;  // closed
    refresh_later();                             // the rest of the map moved too
    return Refusal::retry_now;
  }
  if (r.transient() || r.kind == ClusterRedirect::Kind::ask) {
    refresh_later();
    return Refusal::retry_later;
  }
  return Refusal::fail;
}

void Cluster::preload_twins() {
  for (net::Connection* c : pool_.masters()) {
    for (const script::Script* twin : script::sharded_twins()) {
      std::string payload;
      resp::encode_command(payload,
                           std::array<std::string_view, 3>{"SCRIPT", "LOAD", twin->source});
      net::DetachedCall::start(
          std::make_unique<net::DetachedCall>(net::DetachedCall::Done{}),
          [&](net::DetachedCall& d) { return c->submit(std::move(payload), 1, &d); });
    }
  }
}

bool Cluster::every_master_shards() {
  std::vector<std::unique_ptr<net::SyncCompletion>> asked;
  bool all = true;
  for (net::Connection* c : pool_.masters()) {
    std::string payload;
    resp::encode_command(payload, std::array<std::string_view, 2>{"INFO", "server"});
    auto done = std::make_unique<net::SyncCompletion>();
    if (c->submit(std::move(payload), 1, done.get())) {
      all = false;  // not queued; the ones queued are still waited for below
      break;
    }
    asked.push_back(std::move(done));
  }
  if (asked.empty()) all = false;
  for (auto& done : asked) {
    std::error_code ec;
    const Value info = done->wait(ec);
    if (ec || !info.is_string()) {
      all = false;
      continue;
    }
    const std::string& text = info.as_string();
    const auto at = text.find("redis_version:");
    int major = 0;
    if (at != std::string::npos) {
      const char* first = text.data() + at + 14;
      std::from_chars(first, text.data() + text.size(), major);
    }
    if (major < 7) all = false;
  }
  return all;
}

std::error_code Cluster::command(std::string_view route_key,
                                 std::span<const std::string_view> args,
                                 net::Completion* completion) {
  auto* routed = new RoutedCommand(*this, std::string(route_key), args, completion);
  const auto ec = routed->send(data_for(route_key));
  if (ec) delete routed;
  return ec;
}

void Cluster::refresh_later() {
  asio::post(io_, [this] { refresh_.refresh(); });
}

std::optional<net::Resend> Cluster::resend(const Value& reply,
                                           std::string_view route_key,
                                           unsigned redirects,
                                           std::chrono::milliseconds waited) {
  const ClusterRedirect r = ClusterRedirect::classify(reply);
  if (r.redirection()) {
    if (redirects >= kMaxClusterRedirects) return std::nullopt;
    net::Connection* c = pool_.follow(r);
    if (!c) return std::nullopt;
    const bool ask = r.kind == ClusterRedirect::Kind::ask;
    if (!ask) refresh_later();  // the rest of the map moved too
    return net::Resend{c, ask, true, std::chrono::milliseconds(0)};
  }
  if (!r.transient()) return std::nullopt;
  const auto delay = cluster_retry_delay(waited, options_.command_timeout);
  if (!delay || pool_.closed()) return std::nullopt;
  refresh_later();
  return net::Resend{&data_for(route_key), false, false, *delay};
}

void Cluster::after(std::chrono::milliseconds delay, std::function<void(bool)> f) {
  auto timer = std::make_shared<asio::steady_timer>(io_, delay);
  timer->async_wait(
      [this, timer, f = std::move(f)](std::error_code ec) { f(!ec && !pool_.closed()); });
}

void Cluster::connect() {
  std::string failures;
  for (const auto& seed : options_.seeds) {
    if (!connect_to(seed, failures)) continue;
    using Sharded = ClientOptions::ShardedPubsub;
    sharded_ = options_.sharded_pubsub == Sharded::on ||
               (options_.sharded_pubsub == Sharded::automatic && every_master_shards());
    if (sharded() && options_.preload_scripts) preload_twins();
    return;
  }
  throw Error(errc::connection_failed, "Redis Cluster: no seed answered (" + failures + ")");
}

bool Cluster::connect_to(const ClientOptions::Endpoint& seed, std::string& failures) {
  const std::string where = address(seed.host, seed.port);
  auto conn = data_connection(seed.host, seed.port);
  std::error_code ec;
  std::string message;
  conn->connect(ec, message);
  if (ec) {
    append(failures, where + ": " + message);
    return false;
  }
  const MapReply m = ask_map_blocking(*conn, ec);
  if (ec || m.reply.is_error()) {
    conn->close();
    const std::string why = ec ? ec.message() : m.reply.as_string();
    if (!ec && why.find("cluster support disabled") != std::string::npos) {
      throw Error(errc::invalid_argument,
                  "Redis Cluster: seed " + where + " is not a cluster node (" + why + ")");
    }
    append(failures, where + ": CLUSTER " + (m.shards ? "SHARDS" : "SLOTS") + ": " + why);
    return false;
  }
  const auto ranges = parse_cluster_map(m.reply, m.shards);
  if (!ranges) {
    conn->close();
    append(failures, where + ": an unexpected CLUSTER reply");
    return false;
  }
  if (const auto slot = first_uncovered_slot(*ranges)) {
    conn->close();
    throw Error(errc::connection_failed, "Redis Cluster at " + where + ": no master serves slot " +
                                             std::to_string(*slot) +
                                             " (CLUSTERDOWN: the cluster is down or not set up)");
  }
  pool_.adopt(*ranges, seed.host, seed.port, std::move(conn));
  return true;
}

void Cluster::connect_in_background() {
  pool_.add_seeds();
  refresh_later();
}

void Cluster::close() {
  pool_.close();
  refresh_.stop();
}

std::size_t Cluster::outstanding() {
  return pool_.outstanding();
}

}  // namespace distlock::topology
