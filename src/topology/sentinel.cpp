#include "topology/sentinel.hpp"

#include <asio/post.hpp>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "distlock/error.hpp"
#include "net/detached_call.hpp"
#include "resp/encoder.hpp"

namespace distlock::topology {
namespace {

using Endpoint = ClientOptions::Endpoint;

void send(net::Connection& connection,
          std::vector<std::string_view> args,
          std::function<void(std::error_code, Value)> f) {
  std::string payload;
  resp::encode_command(payload, args);
  // Not queued only when closed: nothing left to do then.
  net::DetachedCall::start(
      std::make_unique<net::DetachedCall>(std::move(f)),
      [&](net::DetachedCall& c) { return connection.submit(std::move(payload), 1, &c); });
}

// One command on a connected connection, waited for on this thread.
Value call_blocking(net::Connection& connection,
                    std::vector<std::string_view> args,
                    std::error_code& ec) {
  std::string payload;
  resp::encode_command(payload, args);
  net::SyncCompletion done;
  ec = connection.submit(std::move(payload), 1, &done);
  if (ec) return {};
  return done.wait(ec);
}

std::string text(const Endpoint& e) {
  const bool v6 = e.host.find(':') != std::string::npos;
  return (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
}

// GET-MASTER-ADDR-BY-NAME's reply: [host, port], or nil for an unknown name.
std::optional<Endpoint> address_in(const Value& reply) {
  if (!reply.is_array() || reply.as_array().size() != 2) return std::nullopt;
  const auto& parts = reply.as_array();
  if (!parts[0].is_string() || !parts[1].is_string()) return std::nullopt;
  try {
    const int port = std::stoi(parts[1].as_string());
    if (port <= 0 || port > 65535) return std::nullopt;
    return Endpoint{parts[0].as_string(), static_cast<std::uint16_t>(port)};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string role_in(const Value& reply) {
  if (reply.is_error()) return reply.as_string();
  if (!reply.is_array() || reply.as_array().empty() || !reply.as_array()[0].is_string()) {
    return "an unexpected reply";
  }
  return reply.as_array()[0].as_string();
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> result;
  std::size_t at = 0;
  while (at < s.size()) {
    const auto end = std::min(s.find(' ', at), s.size());
    if (end > at) result.push_back(s.substr(at, end - at));
    at = end + 1;
  }
  return result;
}

}  // namespace

struct Sentinel::Found {
  std::error_code ec;  // clear: `master` answered ROLE master
  std::string message;
  Endpoint master;
};

Sentinel::Sentinel(asio::io_context& io,
                   const ClientOptions& options,
                   asio::ssl::context* tls,
                   net::Connection::Handlers data_handlers,
                   net::Connection::Handlers subscriber_handlers)
    : io_(io), options_(options), tls_(tls) {
  if (options_.sentinel_master.empty()) {
    throw Error(errc::invalid_argument,
                "ClientOptions: a sentinel deployment needs sentinel_master (the name the "
                "sentinels monitor)");
  }
  for (const Endpoint& e : options_.seeds) {
    if (e.host.empty() || e.port == 0) {
      throw Error(errc::invalid_argument,
                  "ClientOptions: sentinel address '" + text(e) + "' needs a host and a port");
    }
  }
  data_handlers.on_readonly = [this] { rediscover(); };
  data_handlers.on_connect_failed = [this] { rediscover(); };
  subscriber_handlers.on_connect_failed = [this] { rediscover(); };
  data_ = std::make_shared<net::Connection>(io_, options_, tls_, net::Connection::Role::data,
                                            std::move(data_handlers));
  subscriber_ = std::make_shared<net::Connection>(
      io_, options_, tls_, net::Connection::Role::subscriber, std::move(subscriber_handlers));
}

Sentinel::~Sentinel() = default;

net::Connection& Sentinel::subscriber_for(std::string_view) {
  subscriber_->start();
  return *subscriber_;
}

ClientOptions Sentinel::sentinel_options(std::size_t index) const {
  ClientOptions o = options_;
  o.host = options_.seeds[index].host;
  o.port = options_.seeds[index].port;
  o.unix_path.clear();
  o.username = options_.sentinel_username;
  o.password = options_.sentinel_password;
  o.db = 0;  // a sentinel has no databases
  return o;
}

std::string Sentinel::sentinel_name(std::size_t index) const {
  return text(options_.seeds[index]);
}

Sentinel::Found Sentinel::discover_through(std::size_t index, net::Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - net::Clock::now());
  if (left.count() <= 0) return {errc::connection_failed, "not tried: connect_timeout used up", {}};
  // Every step gets only what is left of connect_timeout.
  auto bounded = [&](ClientOptions o) {
    o.connect_timeout = o.command_timeout = left;
    return o;
  };
  std::error_code ec;
  std::string message;
  auto asked =
      std::make_shared<net::Connection>(io_, bounded(sentinel_options(index)), tls_,
                                        net::Connection::Role::data, net::Connection::Handlers{});
  asked->connect(ec, message);
  if (ec) return {ec, message, {}};
  const Value reply =
      call_blocking(*asked, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.sentinel_master}, ec);
  asked->close();
  if (ec) return {ec, "SENTINEL GET-MASTER-ADDR-BY-NAME: " + ec.message(), {}};
  if (reply.is_error()) {
    return {errc::connection_failed, "SENTINEL GET-MASTER-ADDR-BY-NAME: " + reply.as_string(), {}};
  }
  const auto master = address_in(reply);
  if (!master) {
    return {
        errc::connection_failed, "knows no master named '" + options_.sentinel_master + "'", {}};
  }
  // The sentinels may still name the old master for a moment after a
  // failover: ask the node itself.
  ClientOptions node = bounded(options_);
  node.host = master->host;
  node.port = master->port;
  auto probe = std::make_shared<net::Connection>(io_, node, tls_, net::Connection::Role::data,
                                                 net::Connection::Handlers{});
  probe->connect(ec, message);
  if (ec) return {ec, "names " + text(*master) + " as master, but there: " + message, {}};
  const Value role = call_blocking(*probe, {"ROLE"}, ec);
  probe->close();
  if (ec) return {ec, "names " + text(*master) + " as master; ROLE there: " + ec.message(), {}};
  if (role_in(role) != "master") {
    return {errc::connection_failed,
            "names " + text(*master) + " as master, which is not a master (ROLE: " + role_in(role) +
                ")",
            {}};
  }
  return {{}, {}, *master};
}

void Sentinel::connect() {
  const auto deadline = net::Clock::now() + options_.connect_timeout;
  std::string failures;
  bool auth = false;
  for (std::size_t i = 0; i < options_.seeds.size(); ++i) {
    Found found = discover_through(i, deadline);
    if (found.ec) {
      auth = auth || found.ec == errc::auth_failed;
      failures += "; sentinel " + sentinel_name(i) + ": " + found.message;
      continue;
    }
    {
      std::lock_guard lock(mutex_);
      master_ = found.master;
    }
    data_->set_address(found.master.host, found.master.port);
    subscriber_->set_address(found.master.host, found.master.port);
    std::error_code ec;
    std::string message;
    data_->connect(ec, message);
    if (ec) {
      throw Error(ec, "Sentinel: master '" + options_.sentinel_master + "' at " +
                          text(found.master) + ": " + message);
    }
    // The watch lives on the I/O thread, like everything it touches.
    asio::post(io_, [this, i] { watch_from(i); });
    return;
  }
  throw Error(auth ? errc::auth_failed : errc::connection_failed,
              "Sentinel: no usable master '" + options_.sentinel_master + "' from the " +
                  std::to_string(options_.seeds.size()) + " sentinel(s) tried" + failures);
}

void Sentinel::connect_in_background() {
  background_ = true;
  asio::post(io_, [this] { watch_from(0); });
}

void Sentinel::close() {
  if (closed_.exchange(true)) return;
  data_->close();
  subscriber_->close();
  asio::post(io_, [this] {
    if (watch_) watch_->close();
    if (asking_) asking_->close();
  });
}

// --- following (I/O thread) ---------------------------------------------------

void Sentinel::watch_from(std::size_t index) {
  if (closed_) return;
  watch_index_ = index;
  net::Connection::Handlers h;
  h.on_connected = [this](bool) { on_watch_connected(); };
  h.on_push = [this](Value push) { on_switch_message(push); };
  // That sentinel is gone or unreachable: the next attempt goes to the next.
  auto next = [this] {
    watch_index_ = (watch_index_ + 1) % options_.seeds.size();
    const Endpoint& e = options_.seeds[watch_index_];
    watch_->set_address(e.host, e.port);
  };
  h.on_disconnected = next;
  h.on_connect_failed = next;
  watch_ = std::make_shared<net::Connection>(io_, sentinel_options(index), tls_,
                                             net::Connection::Role::subscriber, std::move(h));
  watch_->start();
}

void Sentinel::on_watch_connected() {
  // Ask first (a subscribed connection may not): a switch may have happened
  // while no sentinel connection was up.
  send(*watch_, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.sentinel_master},
       [this](std::error_code ec, Value reply) {
         if (ec) return;
         if (auto master = address_in(reply)) follow(master->host, master->port);
       });
  send(*watch_, {"SUBSCRIBE", "+switch-master"}, [](std::error_code, Value) {});
}

void Sentinel::on_switch_message(const Value& push) {
  // ["message", "+switch-master", "<name> <old-ip> <old-port> <new-ip> <new-port>"]
  const auto& parts = push.as_array();
  if (parts.size() != 3 || !parts[2].is_string()) return;
  const auto fields = words(parts[2].as_string());
  if (fields.size() != 5 || fields[0] != options_.sentinel_master) return;
  if (auto master = address_in(
          Value::array({Value::bulk_string(fields[3]), Value::bulk_string(fields[4])}))) {
    follow(master->host, master->port);
  }
}

void Sentinel::rediscover() {
  // One query at a time: a burst of READONLY replies or failed reconnects
  // asks once.
  if (closed_ || asking_) return;
  ask_index_ = watch_index_;
  ask(options_.seeds.size());
}

void Sentinel::ask(std::size_t tries_left) {
  net::Connection::Handlers h;
  // An unreachable sentinel: give up on it at once (the request then
  // completes with closed) rather than wait for command_timeout. (A weak
  // reference: the connection owns its handlers.)
  auto self = std::make_shared<std::weak_ptr<net::Connection>>();
  h.on_connect_failed = [self] {
    if (auto c = self->lock()) c->close();
  };
  auto connection = std::make_shared<net::Connection>(io_, sentinel_options(ask_index_), tls_,
                                                      net::Connection::Role::data, std::move(h));
  *self = connection;
  asking_ = connection;
  connection->start();
  send(*connection, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.sentinel_master},
       [this, connection, tries_left](std::error_code ec, Value reply) {
         connection->close();
         asking_.reset();
         if (closed_) return;
         const auto master = ec ? std::nullopt : address_in(reply);
         if (master) return follow(master->host, master->port);
         if (tries_left <= 1) return;
         ask_index_ = (ask_index_ + 1) % options_.seeds.size();
         ask(tries_left - 1);
       });
}

void Sentinel::follow(std::string host, std::uint16_t port) {
  if (closed_) return;
  {
    std::lock_guard lock(mutex_);
    if (master_.host == host && master_.port == port) return;
    master_ = {host, port};
  }
  data_->retarget(host, port);
  subscriber_->retarget(std::move(host), port);
  if (background_) data_->start();
}

}  // namespace distlock::topology
