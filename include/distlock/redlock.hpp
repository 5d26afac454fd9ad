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
#include "distlock/lock.hpp"
#include "distlock/metrics.hpp"
#include "distlock/wait_time.hpp"

namespace distlock {

namespace detail {
struct RedlockGroupState;
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
  /// The longest a waiting call sleeps between two attempts when no release
  /// wakes it (a holder that does not publish: node redlock, an expiry):
  /// retry_delay plus a uniformly random extra of up to retry_jitter, so that
  /// competing clients do not retry in lockstep. A distlock holder's release
  /// wakes waiters at once. retry_delay must be positive, retry_jitter >= 0.
  /// Defaults 100 ms and 100 ms.
  std::chrono::milliseconds retry_delay{100};
  std::chrono::milliseconds retry_jitter{100};
  ///@}
  /// Called the moment a hold of this group is lost (the lease ran out, an
  /// extension did not reach a majority, or the group was closed), on the
  /// group's I/O thread. Must not block for long. Optional.
  std::function<void(const LeaseLostEvent&)> on_lease_lost;
};

/// One hold of a RedlockLock owned by this object rather than by a thread:
/// the shared Lease (movable between threads; released when destroyed; its
/// stop_token() is requested the moment the hold is lost). Under Redlock
/// fencing_token() is always nullopt (docs/redlock.md says why and what to
/// use instead).
using RedlockLease = Lease;

/// A lock held on a majority of a RedlockGroup's nodes. Made by
/// RedlockGroup::lock(name); cheap to copy; copies (and other handles of the
/// same name from the same group) are the same lock. It is the shared Lock
/// machinery (thread holds, Lease, watchdog, waiting, pending releases,
/// async forms) over the SET NX layout, run on all the group's nodes at once
/// by a quorum: what a Lock over one server does, it does over a majority.
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
/// slow is only a vote against: never an error.
///
/// Waiting: a waiter subscribes to the lock's channel on every node; a
/// release publishes on every node and the first message wakes it (once:
/// the other nodes' copies of the same release are dropped). Peers that do
/// not publish (node redlock) are picked up by polling: a waiter retries no
/// later than min(the holder's shortest TTL, retry_delay + up to
/// retry_jitter).
///
/// Not reentrant (as SimpleLock): try_lock / try_lock_for / try_lock_until by
/// a thread that already holds it return false at once; lock() by that thread
/// is invalid_argument. Leases are independent holds.
///
/// Leases: without an explicit lease a hold gets RedlockOptions::lease and the
/// group's watchdog extends it on every node (compare-and-pexpire) every third
/// of it. An extension that reaches a majority within the validity moves the
/// deadline on; one that finds the token gone on a majority marks the hold
/// lost at once (reason taken), and one that too few nodes answered marks it
/// lost at once too (reason expired): stop_token, lease_valid(),
/// on_lease_lost. With an explicit lease the hold is never extended and is
/// lost when it runs out.
///
/// Release: compare-and-delete on every node; success when a majority
/// deleted it. A release that too few nodes answered reports timeout and
/// stays pending: the group sends it again in the background until a
/// majority answers, and this thread's next acquire of the name waits for it
/// and then takes a new holding (as Lock's "Release pending", docs/lock.md).
///
/// Fencing: none. Redlock has no single linearizable counter, and a counter
/// on each node would not give a total order across failures; there is no
/// fenced form (docs/redlock.md says what to do instead).
///
/// Errors: contention and unreachable nodes are never errors. Throwing
/// members throw Error: invalid_argument for a negative wait, a non-positive
/// lease, or lock() by the holding thread (nothing is sent); server_error when
/// a majority of the nodes answered an attempt with an error reply (NOPERM,
/// OOM; a key of another type is contention, not an error); timeout from a
/// query or force_unlock that too few nodes answered; closed after the group
/// was closed. The error_code& forms set ec instead and never throw; ec is
/// cleared on success and on contention.
///
/// Thread safety: every member may be called from any thread concurrently.
class RedlockLock : private Lock {
 public:
  // --- Thread-owned ---------------------------------------------------------
  // Waits of any duration round up to whole milliseconds; zero makes exactly
  // one attempt; milliseconds::max() or longer waits as long as it takes.

  /// lock(), lock(ec): blocks until this thread holds it (watchdog lease);
  /// lock(lease), lock(lease, ec): with a fixed lease and no extension.
  using Lock::lock;
  /// One attempt: true when this thread now holds it.
  using Lock::try_lock;
  /// Waits at most `wait`; (wait, lease) holds with a fixed lease;
  /// (wait, optional lease, ec) with nullopt the watchdog lease.
  using Lock::try_lock_for;
  /// Waits until a deadline of any clock (measured once, at the call).
  using Lock::try_lock_until;
  /// Releases this thread's hold on every node. unlock() never throws and
  /// does nothing when this thread does not hold it; unlock(ec) reports as
  /// Lease::release(ec) does (above: timeout leaves it pending), and
  /// not_owner when this thread does not hold the lock (nothing is sent).
  using Lock::unlock;

  ///@{
  /// This thread's hold, locally (no I/O, never throw): held and valid; its
  /// stop token (never requested when not held); its validity deadline.
  bool is_held_by_current_thread() const noexcept;
  bool lease_valid() const noexcept { return is_held_by_current_thread(); }
  std::stop_token stop_token() const noexcept;
  std::optional<std::chrono::steady_clock::time_point> lease_deadline() const noexcept;
  ///@}

  // --- Queries and administration (one fan-out each) -------------------------

  /// Held by anyone on a majority of the nodes (EXISTS on every node). Too
  /// few answers to tell is timeout.
  using Lock::is_locked;
  /// The TTL a majority of the nodes still has (the N/2+1-th longest: the
  /// time the lock surely stays held, whoever holds it); nullopt when a
  /// majority has no key; milliseconds::max() when a majority's keys have
  /// no expiry. Too few answers is timeout.
  using Lock::remaining_ttl;
  /// Whoever holds it: deletes the key on every node and wakes the waiters.
  /// True when some node had a key; timeout when fewer than a majority
  /// answered (it may have been deleted on some).
  using Lock::force_unlock;

  // --- Handle-owned ---------------------------------------------------------

  /// Blocks until held; extended by the watchdog.
  using Lock::acquire;
  /// One attempt; nullopt when not got.
  using Lock::try_acquire;
  /// Waits at most `wait`; nullopt when not got in time. With a fixed
  /// `lease` it is never extended; `lease` nullopt is the watchdog lease.
  using Lock::try_acquire_for;
  /// The asynchronous forms, as Lock's (<distlock/lock_async.hpp>): the
  /// handler gets a Lease; cancellation leaves no key on any node (an
  /// attempt in flight that turns out to have acquired is released).
  /// Lease::async_release releases asynchronously.
  using Lock::async_acquire;
  using Lock::async_try_acquire_for;

  /// The name it was made with.
  using Lock::name;

 private:
  friend class RedlockGroup;
  explicit RedlockLock(Lock lock) : Lock(std::move(lock)) {}
};

/// N independent Redis masters (no replication between them, separate
/// failure domains), each reached through its own connections, all run by
/// the group's one I/O thread, with the watchdog that extends the group's
/// holds, the waiters and the pending releases (a Client's parts, over a
/// quorum of servers instead of one).
///
/// The constructor validates everything before any I/O and throws
/// Error(invalid_argument) for: an empty list; a URI that does not parse (the
/// message names which one and why, as ClientOptions::from_uri); two URIs
/// naming the same server (a host name is resolved: "localhost" and
/// 127.0.0.1 on one port are one server; a Unix socket path compares by its
/// real path; whatever the db: two databases of one server fail together); a
/// bad option (the message names the field). Then it starts connecting to every node
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
  /// throws; may be called from an on_lease_lost callback. Handles (locks,
  /// leases) that outlive the group fail with closed.
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
  std::shared_ptr<detail::RedlockGroupState> state_;
};

}  // namespace distlock
