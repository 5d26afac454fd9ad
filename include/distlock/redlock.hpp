/// \file
/// distlock::RedlockGroup and RedlockLock: the Redlock algorithm over N
/// independent Redis masters. Docs: docs/redlock.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include "distlock/lease.hpp"
#include "distlock/metrics.hpp"
#include "distlock/wait_time.hpp"

namespace distlock {

namespace runtime {
class LeaseState;
}
namespace sync {
class RedlockCore;
}

/// How a RedlockGroup acquires, extends and retries. Validated by the
/// RedlockGroup constructor (Error(invalid_argument) naming the field).
struct RedlockOptions {
  /// The lease of a hold taken without an explicit lease. The group's
  /// watchdog extends it on every node every third of it while it is held.
  /// Default 30 s; at least 30 ms.
  std::chrono::milliseconds lease{30000};
  /// How long one attempt (acquire, extend or release) waits for the nodes'
  /// answers, counted from when its first request was sent. A node that has
  /// not answered by then (down, paused, slow, behind a partition) counts as a
  /// vote against; its request is not withdrawn. Keep it far below the lease
  /// (the Redlock paper: a few ms to tens of ms for a lease of seconds).
  /// Default 100 ms; must be positive and below `lease`.
  std::chrono::milliseconds node_timeout{100};
  /// How far the clocks of this machine and the servers may drift apart, as
  /// a fraction of a lease. A hold is valid for
  ///   lease - (time since the first request was sent) - (lease * factor + 2 ms)
  /// and an attempt whose validity is not positive fails (and is undone) even
  /// with a majority. Default 0.01; must be in [0, 1).
  double clock_drift_factor = 0.01;
  ///@{
  /// Between two attempts of a waiting call: retry_delay plus a uniformly
  /// random extra of up to retry_jitter, so that competing clients do not
  /// retry in lockstep. retry_delay must be positive, retry_jitter >= 0.
  /// Defaults 100 ms and 100 ms.
  std::chrono::milliseconds retry_delay{100};
  std::chrono::milliseconds retry_jitter{100};
  ///@}
  /// Called the moment a hold of this group is lost (the lease ran out, an
  /// extension did not reach a majority, or the group was closed), on the
  /// group's watchdog thread or the thread that closed the group. Must not
  /// block for long. Optional.
  std::function<void(const LeaseLostEvent&)> on_lease_lost;
};

/// One hold of a RedlockLock owned by this object rather than by a thread:
/// movable between threads. Returned by RedlockLock::acquire() and friends.
///
/// While it lives it is extended by the group's watchdog (unless it was taken
/// with a fixed lease). The moment it is lost (an extension reached fewer than
/// a majority of the nodes, the lease ran out, or the group was closed)
/// stop_token() is requested and RedlockOptions::on_lease_lost runs; valid()
/// is false from then on.
///
/// There is no fencing token: Redlock has no single linearizable counter to
/// draw one from (docs/redlock.md).
///
/// Thread safety: const members from any thread; release() and moves need
/// external synchronisation with other calls on the same object.
class RedlockLease {
 public:
  /// An empty lease: valid() is false; release() does nothing.
  RedlockLease() noexcept;
  /// Internal: made by the acquire calls.
  explicit RedlockLease(std::shared_ptr<runtime::LeaseState> state) noexcept;
  /// Releases (as release()); never throws.
  ~RedlockLease();
  /// Takes other's holding; other becomes empty.
  RedlockLease(RedlockLease&& other) noexcept;
  /// Releases the hold this object had, then takes other's.
  RedlockLease& operator=(RedlockLease&& other) noexcept;
  RedlockLease(const RedlockLease&) = delete;
  RedlockLease& operator=(const RedlockLease&) = delete;

  ///@{
  /// True while held: not released, not lost, validity deadline not passed.
  bool valid() const noexcept;
  explicit operator bool() const noexcept { return valid(); }
  ///@}
  /// Time left until deadline(); zero when not valid.
  std::chrono::milliseconds remaining() const noexcept;
  /// The end of the validity on the steady clock: when the acquire (or the
  /// last extension that reached a majority) sent its first request, plus
  /// the lease, less the drift margin. time_point{} when empty.
  std::chrono::steady_clock::time_point deadline() const noexcept;
  /// Requested the moment the hold is lost (not on a normal release).
  std::stop_token stop_token() const noexcept;
  /// The lock's name; empty for an empty lease.
  const std::string& name() const noexcept;

  /// Deletes the hold's key on every node (compare-and-delete of its token)
  /// and stops extending it. Idempotent, never throws, failures ignored (a
  /// node that did not answer keeps the key until its lease runs out).
  void release() noexcept;
  /// As above, reporting: success when a majority of the nodes confirmed the
  /// delete; lease_lost when the hold was lost before, or when so many nodes
  /// no longer had its token that a majority cannot have; timeout when too
  /// few nodes answered within node_timeout to tell (the keys left expire by
  /// themselves); closed after the group was closed.
  void release(std::error_code& ec) noexcept;

 private:
  std::shared_ptr<runtime::LeaseState> state_;
};

/// A lock held on a majority of a RedlockGroup's nodes. Made by
/// RedlockGroup::lock(name); cheap to copy; copies (and other handles of the
/// same name from the same group) are the same lock.
///
/// On each node the key `name` holds a fresh random token per acquisition
/// (128 bits from the CSPRNG, 32 hex characters) with a PEXPIRE of the lease:
/// SimpleLock's layout, so node redlock, redsync and redis-py's Lock on the
/// same masters and name exclude it, and none deletes a key it does not hold.
///
/// Acquire: one attempt sends SET NX PX to every node at once and counts the
/// answers as they arrive, for at most node_timeout. It succeeds when a
/// majority (N/2 + 1) set the token and the validity (see
/// RedlockOptions::clock_drift_factor) is still positive; otherwise it sends
/// the compare-and-delete to every node (also those that did not answer:
/// their late SET may still land) and fails. A node that is down, paused or
/// slow is only a vote against: never an error. Waiting calls retry after
/// retry_delay + jitter until the wait runs out; lock() until held.
///
/// Not reentrant (as SimpleLock): try_lock / try_lock_for / try_lock_until by
/// a thread that already holds it return false at once; lock() by that thread
/// is invalid_argument. RedlockLeases are independent holds.
///
/// Leases: without an explicit lease a hold gets RedlockOptions::lease and the
/// group's watchdog extends it on every node (compare-and-pexpire) every third
/// of it. An extension that reaches a majority within the validity moves the
/// deadline on; one that does not marks the hold lost at once (stop_token,
/// lease_valid(), on_lease_lost) and deletes what is left of it. With an
/// explicit lease the hold is never extended and is lost when it runs out.
///
/// Fencing: none. Redlock has no single linearizable counter, and a counter
/// on each node would not give a total order across failures; there is no
/// fenced form (docs/redlock.md says what to do instead).
///
/// Errors: contention and unreachable nodes are never errors. Throwing
/// members throw Error: invalid_argument for a negative wait, a non-positive
/// lease, or lock() by the holding thread (nothing is sent); server_error when
/// a majority of the nodes answered an attempt with an error reply (NOPERM,
/// OOM, a key of another type is contention, not an error); closed after the
/// group was closed. The error_code& forms set ec instead and never throw;
/// ec is cleared on success and on contention.
///
/// Thread safety: every member may be called from any thread concurrently.
class RedlockLock {
 public:
  // --- Thread-owned ---------------------------------------------------------
  // Waits of any duration round up to whole milliseconds; zero makes exactly
  // one attempt; milliseconds::max() or longer waits as long as it takes.

  ///@{
  /// Blocks until this thread holds the lock (watchdog lease).
  void lock();
  void lock(std::error_code& ec);
  ///@}
  ///@{
  /// Blocks until held, with a fixed lease and no extension.
  void lock(std::chrono::milliseconds lease);
  void lock(std::chrono::milliseconds lease, std::error_code& ec);
  ///@}
  ///@{
  /// One attempt: true when this thread now holds it.
  bool try_lock();
  bool try_lock(std::error_code& ec);
  ///@}
  ///@{
  /// Waits at most `wait` (watchdog lease); false when not got in time.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_lock_ms(detail::wait_ms(wait), std::nullopt);
  }
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait, std::error_code& ec) {
    return try_lock_ms(detail::wait_ms(wait), std::nullopt, ec);
  }
  ///@}
  /// Waits at most `wait`; holds with a fixed `lease`.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait,
                    std::chrono::milliseconds lease) {
    return try_lock_ms(detail::wait_ms(wait), lease);
  }
  /// `lease` nullopt is the watchdog lease.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait,
                    std::optional<std::chrono::milliseconds> lease,
                    std::error_code& ec) {
    return try_lock_ms(detail::wait_ms(wait), lease, ec);
  }
  ///@{
  /// Waits until `deadline` of any clock (measured once, at the call); a
  /// deadline already passed makes one attempt.
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_for(detail::time_left(deadline));
  }
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline,
                      std::error_code& ec) {
    return try_lock_for(detail::time_left(deadline), ec);
  }
  ///@}
  /// Releases this thread's hold on every node. Never throws; does nothing
  /// when this thread does not hold it.
  void unlock() noexcept;
  /// As above, reporting as RedlockLease::release(ec) does, and not_owner
  /// when this thread does not hold the lock (nothing is sent).
  void unlock(std::error_code& ec) noexcept;

  ///@{
  /// This thread's hold, locally (no I/O, never throw): held and valid; its
  /// stop token (never requested when not held); its validity deadline.
  bool is_held_by_current_thread() const noexcept;
  bool lease_valid() const noexcept { return is_held_by_current_thread(); }
  std::stop_token stop_token() const noexcept;
  std::optional<std::chrono::steady_clock::time_point> lease_deadline() const noexcept;
  ///@}

  // --- Handle-owned ---------------------------------------------------------

  ///@{
  /// Blocks until held; extended by the watchdog.
  RedlockLease acquire();
  RedlockLease acquire(std::error_code& ec);
  ///@}
  ///@{
  /// One attempt; nullopt when not got.
  std::optional<RedlockLease> try_acquire();
  std::optional<RedlockLease> try_acquire(std::error_code& ec);
  ///@}
  /// Waits at most `wait`; nullopt when not got in time.
  template <class Rep, class Period>
  std::optional<RedlockLease> try_acquire_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_acquire_ms(detail::wait_ms(wait), std::nullopt);
  }
  /// With a fixed `lease` (never extended).
  template <class Rep, class Period>
  std::optional<RedlockLease> try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                              std::chrono::milliseconds lease) {
    return try_acquire_ms(detail::wait_ms(wait), lease);
  }
  /// `lease` nullopt is the watchdog lease; never throws.
  template <class Rep, class Period>
  std::optional<RedlockLease> try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                              std::optional<std::chrono::milliseconds> lease,
                                              std::error_code& ec) {
    return try_acquire_ms(detail::wait_ms(wait), lease, ec);
  }

  /// The name it was made with.
  const std::string& name() const noexcept { return name_; }

  /// Made by RedlockGroup::lock(). Throws Error(invalid_argument) for an empty
  /// name or one over 65,536 bytes.
  RedlockLock(std::shared_ptr<sync::RedlockCore> core, std::string name);

 private:
  void lock_ms(std::optional<std::chrono::milliseconds> lease,
               std::error_code& ec,
               std::string& message);
  bool try_lock_ms(std::chrono::milliseconds wait, std::optional<std::chrono::milliseconds> lease);
  bool try_lock_ms(std::chrono::milliseconds wait,
                   std::optional<std::chrono::milliseconds> lease,
                   std::error_code& ec);
  bool try_lock_ms(std::chrono::milliseconds wait,
                   std::optional<std::chrono::milliseconds> lease,
                   std::error_code& ec,
                   std::string& message);
  std::optional<RedlockLease> try_acquire_ms(std::chrono::milliseconds wait,
                                             std::optional<std::chrono::milliseconds> lease);
  std::optional<RedlockLease> try_acquire_ms(std::chrono::milliseconds wait,
                                             std::optional<std::chrono::milliseconds> lease,
                                             std::error_code& ec);
  std::optional<RedlockLease> try_acquire_ms(std::chrono::milliseconds wait,
                                             std::optional<std::chrono::milliseconds> lease,
                                             std::error_code& ec,
                                             std::string& message);

  std::shared_ptr<sync::RedlockCore> core_;
  std::string name_;
};

/// N independent Redis masters (no replication between them, separate
/// failure domains), each reached through its own connection, and the
/// watchdog that extends the group's holds.
///
/// The constructor validates everything before any I/O and throws
/// Error(invalid_argument) for: an empty list; a URI that does not parse (the
/// message names which one and why, as ClientOptions::from_uri); two URIs
/// naming the same server (the same host text and port, or Unix socket path,
/// whatever the db: two databases of one server fail together); a bad option
/// (the message names the field). Then it starts connecting to every node
/// and waits until all are connected or the nodes' connect_timeout passes,
/// whichever comes first. A node that cannot be reached is not an error: it
/// votes against every attempt until its connection, retried in the
/// background with backoff, comes up.
///
/// N may be any number >= 1 (even too); the majority is N/2 + 1, so N = 2
/// needs both and an odd N tolerates (N-1)/2 nodes down.
///
/// Thread safety: all members may be called from any thread concurrently,
/// except that destruction and moves need external synchronisation.
class RedlockGroup {
 public:
  /// Validates, then connects to every URI as described above.
  explicit RedlockGroup(std::vector<std::string> uris, RedlockOptions options = {});
  ///@{
  /// Closes the group (see close()).
  ~RedlockGroup();
  ///@}
  ///@{
  /// Movable (a moved-from group may only be destroyed or assigned to), not
  /// copyable.
  RedlockGroup(RedlockGroup&&) noexcept;
  RedlockGroup& operator=(RedlockGroup&&) noexcept;
  RedlockGroup(const RedlockGroup&) = delete;
  RedlockGroup& operator=(const RedlockGroup&) = delete;
  ///@}

  /// A handle to the lock `name` on this group's nodes. No I/O. Throws
  /// Error(invalid_argument) for an empty name or one over 65,536 bytes,
  /// Error(closed) on a moved-from group.
  RedlockLock lock(std::string name);

  ///@{
  /// The number of nodes, and how many make a majority (size() / 2 + 1).
  std::size_t size() const noexcept;
  std::size_t quorum() const noexcept;
  ///@}
  /// The options it was made with.
  const RedlockOptions& options() const noexcept;

  /// Stops the watchdog, marks every hold lost (client_closed), wakes waiting
  /// calls (they fail with closed) and closes the connections. Holds are not
  /// released: their keys expire after their lease. Idempotent; never
  /// throws; may be called from an on_lease_lost callback.
  void close() noexcept;
  /// True once close() was called.
  bool closed() const noexcept;

  /// What this group's locks have done so far, as Client::metrics() (a copy
  /// of relaxed atomic counters; any thread; never blocks on I/O): acquires
  /// and their waits, holds, extensions (`renewals_ok` / `renewals_failed`:
  /// one per hold per extension round), leases lost by reason, held_now,
  /// all under MetricPrimitive::redlock; reconnects and commands_in_flight
  /// summed over the nodes' connections. client_id is empty. Render it with
  /// prometheus_text(group.metrics()) or serve it with MetricsServer. A
  /// moved-from group gives an empty snapshot.
  MetricsSnapshot metrics() const;

 private:
  friend class MetricsServer;
  std::shared_ptr<sync::RedlockCore> core_;
};

}  // namespace distlock
