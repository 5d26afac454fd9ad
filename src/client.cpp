#include "distlock/client.hpp"

#include <asio/post.hpp>
#include <asio/ssl/context.hpp>

#include "client_impl.hpp"
#include "client_options.hpp"
#include "net/tls_context.hpp"
#include "resp/encoder.hpp"
#include "runtime/identity.hpp"
#include "script/scripts.hpp"
#include "sync/lock_ops.hpp"
#include "topology/factory.hpp"

namespace distlock {
namespace detail {

namespace {
ClientOptions validated(ClientOptions options) {
  validate(options);
  return options;
}
}  // namespace

ClientImpl::ClientImpl(ClientOptions options)
    : ClientImpl(validated(std::move(options)),
                 [this](asio::io_context& io,
                        asio::ssl::context* tls,
                        net::Connection::Handlers data,
                        net::Connection::Handlers subscriber) {
                   return topology::make_topology(io, options_, tls, std::move(data),
                                                  std::move(subscriber));
                 }) {}

ClientImpl::ClientImpl(ClientOptions options, const TopologyMaker& make)
    : options_(std::move(options)), id_(runtime::random_uuid()), work_(asio::make_work_guard(io_)) {
  if (options_.backend != ClientOptions::Backend::redis) {
    backend_ = backend::make_backend(options_, executor_, id_);
    return;
  }
  tls_ = net::make_tls_context(options_.tls);
  pending_releases_ = std::make_unique<sync::PendingReleases>();
  semaphores_ = std::make_unique<sync::SemaphoreRegistry>();
  net::Connection::Handlers data;
  data.preload = script::preload_commands();
  data.on_connected = [this](bool reconnected) {
    // Check every lease at once: a restarted server may have lost them all.
    if (reconnected) watchdog_->renew_all_now();
    if (reconnected) metrics_.reconnected();
    // Releases whose outcome is unknown go again now rather than after their
    // backoff, so a thread waiting to lock that name again is not held up.
    pending_releases_->kick_all();
  };
  net::Connection::Handlers subscriber;
  subscriber.on_connected = [this](bool reconnected) { waiters_->on_connected(reconnected); };
  subscriber.on_disconnected = [this] { waiters_->on_disconnected(); };
  subscriber.on_push = [this](Value push) {
    const auto& parts = push.as_array();
    // ["message" or "smessage", channel, payload], ["pmessage", pattern,
    // channel, payload], or ["sunsubscribe", channel, count]
    const Value& channel = parts.size() == 3 ? parts[1] : parts[2];
    const Value& payload = parts.back();
    if (!channel.is_string()) return;
    if (parts[0].as_string() == "sunsubscribe") {
      waiters_->on_unsubscribed(channel.as_string());
    } else {
      waiters_->on_message(channel.as_string(), payload.is_string() ? payload.as_string() : "");
    }
  };
  topology_ = make(io_, tls_.get(), std::move(data), std::move(subscriber));
  if (options_.coalesce) topology_->enable_coalescing(&metrics_);
  // The handlers above run only once the I/O thread starts, after these exist.
  watchdog_ = std::make_unique<runtime::Watchdog>(
      *topology_, options_.watchdog_timeout / 3, io_,
      topology::ReplicaAck{options_.min_replicas_acked, options_.replica_ack_timeout}, &metrics_);
  waiters_ = std::make_unique<runtime::Waiters>(*topology_, io_);
  long_holds_ = std::make_unique<runtime::LongHoldMonitor>(io_, options_.long_hold_warning,
                                                           &options_.on_long_hold);
  services_ = std::unique_ptr<sync::Services>(
      new sync::Services{options_, id_, executor_, *topology_, *watchdog_, *waiters_,
                         *pending_releases_, metrics_, *long_holds_, *semaphores_});
}

ClientImpl::~ClientImpl() {
  close();
}

void ClientImpl::start() {
  thread_ = std::thread([this] { io_.run(); });
  try {
    if (backend_) return backend_->connect();
    topology_->connect();
  } catch (...) {
    close();
    throw;
  }
}

void ClientImpl::start_in_background() {
  if (backend_) throw Error(errc::not_supported, "a background connect needs a Redis client");
  thread_ = std::thread([this] { io_.run(); });
  topology_->connect_in_background();
}

void ClientImpl::close() noexcept {
  if (!executor_.close()) return;
  if (backend_) {
    backend_->close();
    work_.reset();
    if (thread_.joinable()) {
      if (std::this_thread::get_id() == thread_.get_id()) {
        thread_.detach();
      } else {
        thread_.join();
      }
    }
    return;
  }
  // Waiters and the watchdog live on the I/O thread: stop them there, before
  // the connections close (posted handlers run in order).
  asio::post(io_, [this] {
    waiters_->close();
    watchdog_->close();
    pending_releases_->close();
    long_holds_->close();
  });
  topology_->close();
  work_.reset();
  if (thread_.joinable()) {
    if (std::this_thread::get_id() == thread_.get_id()) {
      thread_.detach();  // closing from a handler: the thread ends when io runs dry
    } else {
      thread_.join();
    }
  }
  // The semaphores' per-Client permit counts keep themselves (and so this
  // Client) alive while they hold: let them go now that nothing renews.
  semaphores_->close();
}

MetricsSnapshot ClientImpl::metrics_snapshot() const {
  MetricsSnapshot s = metrics_.snapshot();
  s.client_id = id_;
  // The connection keeps this count atomically; reading it takes no lock.
  if (topology_) s.commands_in_flight = topology_->outstanding();
  return s;
}

std::error_code ClientImpl::submit(std::span<const std::string_view> args,
                                   net::Completion* completion) {
  if (args.empty()) return errc::invalid_argument;
  if (!topology_) return errc::not_supported;
  const std::string_view key = args.size() > 1 ? args[1] : std::string_view();
  return topology_->command(key, args, completion);
}

}  // namespace detail

std::shared_ptr<sync::Services> sync::services_of(
    const std::shared_ptr<detail::ClientImpl>& client) {
  // Shares the ClientImpl's ownership: the parts live as long as the pointer.
  if (!client->redis()) return nullptr;
  return std::shared_ptr<sync::Services>(client, &client->services());
}

backend::Backend* sync::backend_of(const std::shared_ptr<detail::ClientImpl>& client) {
  return client ? client->backend() : nullptr;
}

std::shared_ptr<sync::Services> sync::services_for(
    const std::shared_ptr<detail::ClientImpl>& client, std::string_view what) {
  if (!client) throw Error(errc::closed, "the client was moved from");
  if (!client->redis()) {
    throw Error(errc::not_supported, "the " + std::string(client->backend()->name()) +
                                         " backend has no " + std::string(what) +
                                         " (docs/backends.md lists what each backend provides)");
  }
  return services_of(client);
}

namespace {

[[noreturn]] void throw_for(std::error_code ec, const Value& reply, std::string_view verb) {
  if (ec == errc::server_error && reply.is_error()) throw Error(ec, reply.as_string());
  if (ec == errc::not_supported) {
    throw Error(ec, "command " + std::string(verb) +
                        ": Redis commands need a Redis client (docs/backends.md)");
  }
  if (ec == errc::invalid_argument) {
    throw Error(ec, "command " + std::string(verb) +
                        ": empty command, or a blocking call on the Client's I/O thread");
  }
  throw Error(ec, "command " + std::string(verb));
}

}  // namespace

Client::Client(std::string_view uri) : Client(ClientOptions::from_uri(uri)) {}

Client::Client(ClientOptions options)
    : impl_(std::make_shared<detail::ClientImpl>(std::move(options))) {
  impl_->start();
}

Client::~Client() {
  if (impl_) impl_->close();
}

Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->close();
    impl_ = std::move(other.impl_);
  }
  return *this;
}

Value Client::command(std::span<const std::string_view> args) {
  std::error_code ec;
  Value reply = command(args, ec);
  if (ec) throw_for(ec, reply, args.empty() ? std::string_view("(empty)") : args[0]);
  return reply;
}

Value Client::command(std::span<const std::string_view> args, std::error_code& ec) {
  if (!impl_) {
    ec = errc::closed;
    return {};
  }
  return impl_->call(args, ec);
}

void Client::close() noexcept {
  if (impl_) impl_->close();
}

bool Client::closed() const noexcept {
  return !impl_ || impl_->closed();
}
const std::string& Client::id() const noexcept {
  return impl_->id();
}
const ClientOptions& Client::options() const noexcept {
  return impl_->options();
}

MetricsSnapshot Client::metrics() const {
  return impl_ ? impl_->metrics_snapshot() : MetricsSnapshot{};
}

}  // namespace distlock
