// The shared state behind Client and every handle made from it.
#pragma once

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/ssl/context.hpp>
#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>

#include "distlock/client_options.hpp"
#include "distlock/value.hpp"
#include "net/completion.hpp"
#include "runtime/lease_state.hpp"
#include "runtime/waiters.hpp"
#include "runtime/watchdog.hpp"
#include "topology/topology.hpp"

namespace distlock::detail {

class PendingRelease;
class PendingReleases;

// A thread's holding of one lock: its lease and local hold count.
struct ThreadHold {
  std::shared_ptr<LeaseState> state;
  std::uint32_t count = 0;
  // A release of this holding (a timed-out or dropped unlock, or the undo of
  // an acquire that got no reply) that the server has not confirmed yet. The
  // thread's next lock or unlock of the name settles it first. `count` is
  // what the server holds once it is settled.
  std::shared_ptr<PendingRelease> pending;
};

class ClientImpl : public std::enable_shared_from_this<ClientImpl> {
 public:
  // Validates options and prepares TLS; no I/O yet. Throws Error.
  explicit ClientImpl(ClientOptions options);
  ~ClientImpl();

  // Starts the I/O thread and makes the first connection. Throws Error.
  void start();
  void close() noexcept;
  bool closed() const noexcept { return closed_.load(); }

  // True when called from the I/O thread (where blocking would deadlock).
  bool on_io_thread() const noexcept;
  // Sets ec (closed, or invalid_argument on the I/O thread) when a blocking
  // call may not proceed.
  bool may_block(std::error_code& ec) const;

  // One command, blocking. See Client::command.
  Value call(std::span<const std::string_view> args, std::error_code& ec);
  // Queues one command for `completion`; returns an error if it was not queued.
  std::error_code submit(std::span<const std::string_view> args, net::Completion* completion);

  asio::io_context& io() noexcept { return io_; }
  topology::Topology& topology() noexcept { return *topology_; }
  Watchdog& watchdog() noexcept { return *watchdog_; }
  Waiters& waiters() noexcept { return *waiters_; }
  PendingReleases& pending_releases() noexcept { return *pending_releases_; }
  const ClientOptions& options() const noexcept { return options_; }
  const std::string& id() const noexcept { return id_; }

  // "<client-id>:<thread-number>": the calling thread's owner id.
  std::string thread_owner() const;

 private:
  const ClientOptions options_;
  const std::string id_;
  mutable asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::unique_ptr<asio::ssl::context> tls_;
  std::unique_ptr<topology::Topology> topology_;
  std::unique_ptr<Watchdog> watchdog_;
  std::unique_ptr<Waiters> waiters_;
  std::unique_ptr<PendingReleases> pending_releases_;
  std::thread thread_;
  std::atomic<bool> closed_{false};
};

}  // namespace distlock::detail
