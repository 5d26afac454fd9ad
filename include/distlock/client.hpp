/// \file
/// distlock::Client: the entry point. One Client per process is the usual
/// shape; every thread shares it.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "distlock/client_options.hpp"
#include "distlock/error.hpp"
#include "distlock/lock.hpp"
#include "distlock/lock_options.hpp"
#include "distlock/metrics.hpp"
#include "distlock/value.hpp"

namespace distlock {

namespace detail {
class ClientImpl;
struct Access;

/// One command argument: a string (viewed, not copied) or an integer (formatted).
class Arg {
 public:
  Arg(std::string_view s) : view_(s) {}    // NOLINT(google-explicit-constructor)
  Arg(const std::string& s) : view_(s) {}  // NOLINT(google-explicit-constructor)
  Arg(const char* s) : view_(s) {}         // NOLINT(google-explicit-constructor)
  template <std::integral I>
  Arg(I v) : owned_(std::to_string(v)), has_owned_(true) {}  // NOLINT(google-explicit-constructor)
  std::string_view view() const { return has_owned_ ? std::string_view(owned_) : view_; }

 private:
  std::string_view view_;
  std::string owned_;
  bool has_owned_ = false;
};
}  // namespace detail

class Lock;
class ReadWriteLock;
class SimpleLock;
class Latch;        ///< latch.hpp
class RateLimiter;  ///< rate_limiter.hpp
class Semaphore;    ///< semaphore.hpp

/// A connection to one Redis deployment, shared by all threads of a process.
///
/// Construction connects (TCP/Unix/TLS, then AUTH, SELECT and CLIENT SETNAME)
/// and throws Error on failure: invalid_argument for a bad URI or option,
/// connection_failed when the server cannot be reached within
/// connect_timeout, auth_failed when the credentials are refused. After that
/// the Client reconnects by itself when the connection drops.
///
/// Thread safety: every member function may be called from any thread at the
/// same time. Commands from all threads are pipelined over one connection.
///
/// Blocking calls must not be made from inside an async completion handler
/// that runs on the Client's I/O thread: they fail at once with
/// invalid_argument instead of deadlocking.
class Client {
 public:
  ///@{
  /// From a URI; see ClientOptions::from_uri for the forms accepted.
  explicit Client(std::string_view uri);
  explicit Client(ClientOptions options);
  ///@}
  ///@{
  /// Closes the Client (see close()).
  ~Client();
  ///@}
  ///@{
  /// Movable (a moved-from Client may only be destroyed or assigned to), not
  /// copyable.
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ///@}

  ///@{
  /// Sends one command and waits for its reply, e.g.
  ///   client.command("SET", key, value);  client.command("INCRBY", key, 5);
  /// Routing: the command goes to the connection that serves its second
  /// argument (the first after the command name), taken as its key: on one
  /// server or under Sentinel every command reaches the master; under
  /// Cluster this argument's slot chooses the master (MOVED and ASK are
  /// followed), so a command whose key is not its second argument (EVAL,
  /// multi-key commands across slots) is not routed by its key.
  /// Returns the reply. Throws Error: server_error (with the server's text)
  /// for an error reply, timeout, connection_lost, closed, queue_full.
  template <class... Args>
  Value command(std::string_view name, const Args&... args) {
    const detail::Arg holders[] = {detail::Arg(name), detail::Arg(args)...};
    std::string_view views[sizeof...(Args) + 1];
    for (std::size_t i = 0; i < sizeof...(Args) + 1; ++i) views[i] = holders[i].view();
    return command(std::span<const std::string_view>(views));
  }
  Value command(std::span<const std::string_view> args);
  ///@}
  /// As above but never throws for the errors listed: sets ec instead. An
  /// error reply sets ec to server_error and is returned as an error Value
  /// carrying the server's text.
  Value command(std::span<const std::string_view> args, std::error_code& ec);

  /// Sends one command without waiting. Returns at once; the handler runs
  /// exactly once, never inside this call, with signature
  /// void(std::error_code, distlock::Value), on the handler's associated
  /// executor (by default the Client's I/O thread). Works with any Asio
  /// completion token: a callback, asio::use_future, asio::use_awaitable.
  /// An error reply completes with server_error and the error Value. Once
  /// sent, a command cannot be cancelled; the handler runs when its reply, a
  /// timeout, or the connection's loss arrives. Defined in
  /// <distlock/client_async.hpp>.
  template <class Token>
  auto async_command(std::vector<std::string> args, Token&& token);

  /// Creates a handle to the reentrant lock `name` (see lock.hpp). Cheap; no
  /// I/O. Throws Error(invalid_argument) for an empty name or one over 64 KiB.
  Lock lock(std::string name);
  /// As lock(), but every acquisition also takes a fencing token: a number
  /// that strictly increases across all holders of `name`.
  Lock fenced_lock(std::string name);
  ///@{
  /// As lock() / fenced_lock(), with per-lock options (lock_options.hpp).
  /// Also throw Error(invalid_argument) for an option out of range.
  Lock lock(std::string name, const LockOptions& options);
  Lock fenced_lock(std::string name, const LockOptions& options);
  ///@}

  ///@{
  /// The rest of the lock family, each defined with its class:
  /// a FIFO fair lock with Lock's API (fair_lock.hpp), a read-write lock
  /// (read_write_lock.hpp) and the plain SET NX PX lock that other languages'
  /// libraries speak (simple_lock.hpp); the fenced_ forms also hand out
  /// fencing tokens (the write side, for the read-write lock). Cheap; no I/O.
  /// Throw Error(invalid_argument) for an empty name or one over 64 KiB.
  Lock fair_lock(std::string name);
  Lock fenced_fair_lock(std::string name);
  ReadWriteLock read_write_lock(std::string name);
  ReadWriteLock fenced_read_write_lock(std::string name);
  SimpleLock simple_lock(std::string name);
  SimpleLock fenced_simple_lock(std::string name);
  ///@}
  ///@{
  /// As simple_lock() / fenced_simple_lock(), with per-lock options
  /// (lock_options.hpp); throw Error(invalid_argument) for one out of range.
  SimpleLock simple_lock(std::string name, const LockOptions& options);
  SimpleLock fenced_simple_lock(std::string name, const LockOptions& options);
  /// As fair_lock() / fenced_fair_lock(), with per-lock options
  /// (lock_options.hpp); throw Error(invalid_argument) for one out of range.
  Lock fair_lock(std::string name, const LockOptions& options);
  Lock fenced_fair_lock(std::string name, const LockOptions& options);
  /// As read_write_lock() / fenced_read_write_lock(): the delay is the write
  /// side's (a write hold that ends unreleased); read acquires honour it.
  ReadWriteLock read_write_lock(std::string name, const LockOptions& options);
  ReadWriteLock fenced_read_write_lock(std::string name, const LockOptions& options);
  ///@}
  ///@{
  /// Synchronizers, each defined with its class: a countdown latch
  /// (latch.hpp) and a rate limiter on the server's clock (rate_limiter.hpp).
  /// Cheap; no I/O. Throw Error(invalid_argument) for an empty name or one
  /// over 64 KiB, Error(closed) on a moved-from Client.
  Latch latch(std::string name);
  RateLimiter rate_limiter(std::string name);
  ///@}
  /// A crash-safe counting semaphore (<distlock/semaphore.hpp>).
  /// Cheap; no I/O. Throws Error(invalid_argument) as the factories above.
  Semaphore semaphore(std::string name);

  ///@{
  /// Closes the connections, fails everything queued or in flight with
  /// errc::closed, stops renewing leases (they then expire on the server after
  /// their TTL) and joins the I/O thread. Idempotent; never throws. Must not be
  /// called from the Client's I/O thread. Any later call fails with closed.
  void close() noexcept;
  ///@}
  /// True once close() was called.
  bool closed() const noexcept;

  /// This Client's random id (a UUID); lock owners are "<id>:<thread>".
  const std::string& id() const noexcept;
  /// The options it was made with (a URI's, parsed).
  const ClientOptions& options() const noexcept;

  /// What this Client's primitives have done so far (distlock/metrics.hpp):
  /// a copy, read with relaxed atomic loads (counters recorded concurrently
  /// may or may not show). Any thread; never blocks on I/O; cheap enough to
  /// scrape every second. A moved-from Client gives an empty snapshot.
  MetricsSnapshot metrics() const;

 private:
  friend struct detail::Access;  // the library's access (end of client.hpp)

  std::shared_ptr<detail::ClientImpl> impl_;
};

namespace detail {

// The library's one way into the internals of the public handles: the
// Client's implementation, a Lock's Client parts and primitive, a Lease's
// state. They are private members of Client, Lock and Lease, which name this
// struct their friend, so they are not part of the public API. Used by src/
// and by the templates of the *_async.hpp headers; not for applications (no
// stability promise).
struct Access {
  // The Client's implementation; null for a moved-from Client.
  static const std::shared_ptr<ClientImpl>& impl(const Client& client) noexcept {
    return client.impl_;
  }

  // A Lock handle to the reentrant lock `name` (Client::lock()).
  static Lock lock(std::shared_ptr<sync::Services> client, std::string name, bool fenced) {
    return Lock(std::move(client), std::move(name), fenced);
  }
  // A Lock handle to another lock-like primitive with Lock's API (a fair
  // lock, a read-write lock's side, a SET NX lock).
  static Lock lock(std::shared_ptr<sync::Services> client,
                   std::shared_ptr<const sync::Primitive> primitive) {
    return Lock(std::move(client), std::move(primitive));
  }
  // A Lock handle over another backend's engine (backend/lock_engine.hpp).
  static Lock lock(std::shared_ptr<backend::LockEngine> engine) { return Lock(std::move(engine)); }
  // The engine of a Lock made by a non-Redis Client; null for Redis.
  static const std::shared_ptr<backend::LockEngine>& engine(const Lock& lock) noexcept {
    return lock.engine_;
  }
  // The state behind `lease` (null for an empty Lease).
  static const runtime::LeaseState* state(const Lease& lease) noexcept {
    return lease.state_.get();
  }
  // The Client parts `lock` uses, and its primitive.
  static const std::shared_ptr<sync::Services>& services(const Lock& lock) noexcept {
    return lock.client_;
  }
  static const std::shared_ptr<const sync::Primitive>& primitive(const Lock& lock) noexcept {
    return lock.primitive_;
  }

  // A Lease owning `state` (made by the acquire calls).
  static Lease lease(std::shared_ptr<runtime::LeaseState> state) noexcept {
    return Lease(std::move(state));
  }
  // The Client parts behind `lease` (null for an empty Lease).
  static std::shared_ptr<sync::Services> services(const Lease& lease) noexcept {
    return lease.services();
  }
  // Leaves `lease` empty without releasing, and returns its state (for the
  // asynchronous release).
  static std::shared_ptr<runtime::LeaseState> take_state(Lease& lease) noexcept {
    return std::move(lease.state_);
  }
};

}  // namespace detail

}  // namespace distlock
