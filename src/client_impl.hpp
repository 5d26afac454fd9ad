// The shared state behind Client and every handle made from it.
#pragma once

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/ssl/context.hpp>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>

#include "backend/backend.hpp"
#include "distlock/client_options.hpp"
#include "distlock/error.hpp"
#include "distlock/value.hpp"
#include "net/completion.hpp"
#include "net/connection.hpp"
#include "runtime/executor.hpp"
#include "runtime/metrics.hpp"
#include "runtime/metrics_long_hold.hpp"
#include "runtime/waiters.hpp"
#include "runtime/watchdog.hpp"
#include "sync/semaphore_registry.hpp"
#include "sync/services.hpp"
#include "topology/topology.hpp"

namespace distlock::detail {

class PendingReleases;

// Assembles the Client's parts (executor, topology, watchdog, waiters,
// pending releases, semaphore states) and the Services view of them that the primitives use;
// owns the I/O thread. Only the top level of src/ (the public Client,
// RedlockGroup and MetricsServer, services_of) and tests see it: the layers
// below get its parts through Services.
class ClientImpl : public std::enable_shared_from_this<ClientImpl> {
 public:
  // Makes the topology from the Client's I/O context, TLS context and the
  // handlers of its data and pub/sub connections.
  using TopologyMaker =
      std::function<std::unique_ptr<topology::Topology>(asio::io_context&,
                                                        asio::ssl::context*,
                                                        net::Connection::Handlers,
                                                        net::Connection::Handlers)>;

  // Validates options and prepares TLS; no I/O yet. Throws Error.
  explicit ClientImpl(ClientOptions options);
  // Over the topology `make` builds (a RedlockGroup's Quorum), with options
  // the caller has validated (a group allows a clock drift factor up to 1).
  ClientImpl(ClientOptions options, const TopologyMaker& make);
  ~ClientImpl();

  // Starts the I/O thread and makes the first connection. Throws Error.
  void start();
  // Starts the I/O thread and connects in the background: never throws for
  // an unreachable server; calls queue until the connection is up, and
  // failed connects retry with backoff until close() (a RedlockGroup).
  void start_in_background();
  void close() noexcept;
  bool closed() const noexcept { return executor_.closed(); }

  // One command, blocking. See Client::command.
  Value call(std::span<const std::string_view> args, std::error_code& ec) {
    if (!services_) {
      ec = errc::not_supported;  // another backend: no Redis commands
      return {};
    }
    return services_->call(args, ec);
  }
  // Queues one command for `completion`; returns an error if it was not queued.
  std::error_code submit(std::span<const std::string_view> args, net::Completion* completion);

  asio::io_context& io() noexcept { return io_; }
  topology::Topology& topology() noexcept { return *topology_; }
  runtime::Watchdog& watchdog() noexcept { return *watchdog_; }
  runtime::Waiters& waiters() noexcept { return *waiters_; }
  sync::PendingReleases& pending_releases() noexcept { return *pending_releases_; }
  const ClientOptions& options() const noexcept { return options_; }
  const std::string& id() const noexcept { return id_; }
  sync::Services& services() noexcept { return *services_; }
  // Null for a Redis Client (the parts above); otherwise the backend that
  // serves its locks, and the Redis parts are not made.
  backend::Backend* backend() noexcept { return backend_.get(); }
  // Whether the Redis parts exist (ClientOptions::backend is redis).
  bool redis() const noexcept { return services_ != nullptr; }
  // Client::metrics(): counters, client id and commands in flight. Any thread.
  MetricsSnapshot metrics_snapshot() const;

 private:
  const ClientOptions options_;
  const std::string id_;
  // Before everything that records into it: renewal calls may complete
  // while the topology is being destroyed.
  runtime::Metrics metrics_;
  mutable asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  runtime::Executor executor_{io_};
  std::unique_ptr<asio::ssl::context> tls_;
  std::unique_ptr<topology::Topology> topology_;
  std::unique_ptr<runtime::Watchdog> watchdog_;
  std::unique_ptr<runtime::Waiters> waiters_;
  std::unique_ptr<sync::PendingReleases> pending_releases_;
  std::unique_ptr<runtime::LongHoldMonitor> long_holds_;
  std::unique_ptr<sync::SemaphoreRegistry> semaphores_;
  std::unique_ptr<sync::Services> services_;
  std::unique_ptr<backend::Backend> backend_;
  std::thread thread_;
};

}  // namespace distlock::detail
