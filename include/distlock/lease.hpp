/// \file
/// distlock::Lease: one holding of a lock, owned by a handle rather than a
/// thread, and the lease-lost event.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

namespace distlock {

namespace runtime {
class LeaseState;
}
namespace sync {
struct Services;
}
namespace detail {
struct Access;
}

/// Passed to ClientOptions::on_lease_lost the moment a lease is lost.
class LeaseLostEvent {
 public:
  /// Why the lease was lost.
  enum class Reason {
    /// The lease deadline passed without a confirmed renewal (server paused
    /// or unreachable, or a fixed lease ran out before release).
    expired,
    /// A renewal found the lock gone or held by another owner (deleted,
    /// force-unlocked, server restarted without the data, ...).
    taken,
    /// The Client was closed while the lease was held; it is no longer renewed.
    client_closed,
    /// Not a loss yet: the holding is *uncertain* (ZooKeeper: the connection
    /// to the ensemble dropped, Curator's SUSPENDED). The session, and with it
    /// the lock, may or may not outlive the outage. From this event on the
    /// holding reports valid() false and must not be acted on; the stop token
    /// is NOT requested. Either the connection comes back within the session
    /// (valid() is true again, with no further event) or an `expired` event
    /// follows (the session ended: the lock is gone, stop token requested).
    /// Treating this event as a loss is always safe. Never sent for Redis.
    suspended,
  };
  std::string name;   ///< the lock's name
  std::string owner;  ///< the owner id whose lease was lost
  Reason reason;      ///< why
};

/// A held lock, owned by this object rather than by a thread: it can be moved
/// between threads and coroutines. Returned by Lock::acquire() and friends.
///
/// The lease is renewed by the Client's watchdog while it lives (unless it was
/// taken with a fixed lease). The moment it is lost, stop_token() is requested
/// and ClientOptions::on_lease_lost runs; valid() is false from then on.
///
/// Thread safety: const members may be called from any thread concurrently;
/// release() and moves need external synchronisation with other calls on the
/// same Lease, as for any C++ object.
class Lease {
 public:
  /// An empty lease: valid() is false; release() does nothing.
  Lease() noexcept;
  /// Releases the lease (as release()); never throws.
  ~Lease();
  /// Takes other's holding; other becomes empty.
  Lease(Lease&& other) noexcept;
  /// Releases the lease this object held, then takes other's.
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  ///@{
  /// True while held: not released, not lost, and the deadline (counted from
  /// when the acquire or the last confirmed renewal was sent) not passed.
  bool valid() const noexcept;
  explicit operator bool() const noexcept { return valid(); }
  ///@}
  /// Time left until the lease deadline on the steady clock; zero when not
  /// valid.
  std::chrono::milliseconds remaining() const noexcept;
  /// The lease deadline on the steady clock: when the acquire or the last
  /// confirmed renewal was sent, plus the lease. time_point{} for an empty Lease.
  std::chrono::steady_clock::time_point deadline() const noexcept;
  /// Requested the moment the lease is lost (not on a normal release).
  std::stop_token stop_token() const noexcept;
  /// The fencing token of this holding (fenced locks only), strictly
  /// increasing across all holders of the name.
  std::optional<std::uint64_t> fencing_token() const noexcept;
  /// The lock's name; empty for an empty Lease.
  const std::string& name() const noexcept;

  /// Releases the lock on the server and stops renewing it. Idempotent and
  /// never throws; failures are ignored (the lease then expires on the
  /// server by itself).
  void release() noexcept;
  /// As above, but reports: lease_lost when the lease was lost before
  /// release; connection_lost / timeout / closed when the release could not
  /// be confirmed (the lease still expires on the server by itself).
  void release(std::error_code& ec) noexcept;
  /// Releases without blocking a thread. Returns at once; the handler runs
  /// exactly once, never inside this call, with signature
  /// void(std::error_code), on its associated executor (default: the
  /// Client's I/O thread). The error is what release(ec) would report. The
  /// Lease is empty (released) as soon as this returns. Defined in
  /// <distlock/lock_async.hpp>.
  template <class Token>
  auto async_release(Token&& token);

 private:
  friend struct detail::Access;  // the library's access (end of client.hpp)

  // Made by the acquire calls (detail::Access::lease).
  explicit Lease(std::shared_ptr<runtime::LeaseState> state) noexcept;

  // The Client parts behind this lease (null for an empty Lease).
  std::shared_ptr<sync::Services> services() const noexcept;

  std::shared_ptr<runtime::LeaseState> state_;
};

}  // namespace distlock
