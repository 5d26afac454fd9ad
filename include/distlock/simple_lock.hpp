/// \file
/// distlock::SimpleLock: the canonical SET NX lock that node redlock, redsync
/// and redis-py's Lock speak (docs/simple_lock.md).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "distlock/lock.hpp"

namespace distlock {

/// A handle to the SET NX lock `name`, made by Client::simple_lock() or
/// Client::fenced_simple_lock(). The factories do no I/O; they throw
/// Error(invalid_argument) for an empty name or one over 65,536 bytes, and
/// Error(closed) on a moved-from Client. Cheap to copy; copies name the same
/// lock; dropping a handle never releases a hold.
///
/// On the server: the string key `name` holds a fresh random token per
/// acquisition (128 bits from the CSPRNG, 32 lowercase hex characters) with a
/// PEXPIRE of the lease. Acquire is SET NX PX, release is compare-and-delete
/// (then a publish on "distlock_simple_lock__channel:{name}" that only
/// distlock listens to), renewal is compare-and-pexpire. node redlock, redsync
/// and redis-py's Lock use the same key the same way, so a SimpleLock and any
/// of them on one name exclude each other, and none deletes a key it does not
/// hold. A fenced lock also INCRs a counter key in the same cluster slot
/// ("redisson_lock_token:{name}", the counter fenced_lock(name) uses; see
/// docs/simple_lock.md) on every acquisition; tokens strictly increase across
/// all fenced holders and work with fenced_set (<distlock/fencing.hpp>).
///
/// Not reentrant: a holder is one acquisition. try_lock / try_lock_for /
/// try_lock_until by the thread that holds it return false at once (without
/// waiting out the wait); lock() and lock(lease) by that thread throw
/// Error(invalid_argument) instead of waiting for themselves forever (the
/// error_code& forms set it). Handle-owned Leases are independent holdings:
/// a second acquire() through any handle waits for the first Lease.
///
/// Leases as Lock's: without an explicit lease (lock(), try_lock_for(wait),
/// acquire()) the key gets ClientOptions::watchdog_timeout and the Client's
/// watchdog renews it every third of it until released; with an explicit lease
/// it simply expires then. A holder learns of a lost lease by stop_token(),
/// lease_valid() and ClientOptions::on_lease_lost.
///
/// Waiting: a waiter subscribes to the lock's channel and retries when a
/// distlock holder releases. Peers release without publishing, so it also
/// retries no later than min(the holder's remaining TTL, kPollCap): a key a
/// peer deletes is picked up within kPollCap, not at the end of the peer's TTL.
///
/// Errors: contention is never an error. Throwing members throw Error:
/// invalid_argument for a non-positive lease or a negative wait (nothing is
/// sent), timeout / connection_lost when Redis did not answer, closed after
/// Client::close(). A key of another type under the name (a Lock's hash) is
/// contention, not an error: the SET NX fails. An acquire that may have
/// reached the server but got no reply is never re-sent; a release of that
/// attempt's token is sent until the server answers.
///
/// Thread safety: all members may be called from any thread concurrently.
class SimpleLock : private Lock {
 public:
  /// The longest a waiter sleeps between two attempts without a wake-up.
  static constexpr std::chrono::milliseconds kPollCap{200};

  // Every member below is Lock's own (SimpleLock is a Lock on the SET NX
  // layout, without hold_count()), with the differences each comment states.
  //
  // --- Thread-owned ---------------------------------------------------------
  //
  // As Lock's: each blocking call has a throwing form and a std::error_code&
  // form that never throws for the errors above (ec cleared on success).
  // Waits of any duration round up to whole milliseconds; zero makes exactly
  // one attempt; a negative wait is invalid_argument.

  /// Blocks until this thread holds the lock: lock() and lock(ec) with the
  /// watchdog lease; lock(lease) and lock(lease, ec) with a fixed lease and
  /// no watchdog. invalid_argument for a non-positive lease or when this
  /// thread already holds it.
  using Lock::lock;
  /// One attempt. True when this thread now holds the lock; false when
  /// another owner holds it, or this thread does already.
  using Lock::try_lock;
  /// Waits at most `wait`; without `lease` (or with nullopt) the watchdog
  /// lease, with `lease` a fixed lease (no watchdog). False when not got in
  /// time (never before `wait` has passed, unless this thread already holds
  /// it); invalid_argument for a negative wait or a non-positive lease.
  using Lock::try_lock_for;
  /// Waits until `deadline` of any clock (watchdog lease); a deadline already
  /// passed makes one attempt.
  using Lock::try_lock_until;
  /// Releases this thread's hold (compare-and-delete). unlock() never throws
  /// and does nothing when this thread does not hold it. unlock(ec) reports:
  /// success only when the server deleted this thread's token; not_owner when
  /// this thread does not hold the lock (the key is left alone); lease_lost
  /// when the key no longer held this thread's token (it expired, possibly
  /// taken by another holder or a peer, whose key is left alone); timeout /
  /// connection_lost when no reply came (the release stays pending and is
  /// re-sent in the background, as Lock::unlock(ec) says).
  using Lock::unlock;

  /// Whoever holds it (a peer included): deletes the key and wakes distlock's
  /// waiters. True when a key was deleted.
  using Lock::force_unlock;

  // Queries: one round trip each, reading the server. The error_code& forms
  // return false / nullopt with ec set on failure.

  /// Held by anyone (the key exists, whatever wrote it).
  using Lock::is_locked;
  /// Held by this thread: it has a local hold and the key holds its token.
  using Lock::is_held_by_current_thread;
  /// The key's remaining TTL; nullopt when not locked; milliseconds::max()
  /// when the key has no expiry (a peer's key set without one).
  using Lock::remaining_ttl;

  // This thread's local state only: no I/O, never throw.

  /// This thread's fencing token while it holds a fenced simple lock.
  using Lock::fencing_token;
  /// Requested when this thread's lease is lost; a never-requested token when
  /// it does not hold the lock.
  using Lock::stop_token;
  /// Whether this thread's lease is still held (not lost, deadline not passed).
  using Lock::lease_valid;
  /// This thread's lease deadline on the steady clock; nullopt when not held.
  using Lock::lease_deadline;

  // --- Handle-owned ----------------------------------------------------------
  //
  // A Lease is one acquisition with its own token, movable between threads;
  // errors, waits and leases as for Lock's forms of the same name.

  /// Blocks until held; renewed by the watchdog.
  using Lock::acquire;
  /// One attempt; nullopt when someone else holds it.
  using Lock::try_acquire;
  /// Waits at most `wait`; nullopt when not got in time. With `lease`, a
  /// fixed lease (no watchdog); nullopt as `lease` is the watchdog lease.
  using Lock::try_acquire_for;

  /// Acquire without blocking a thread, exactly as Lock::async_acquire and
  /// Lock::async_try_acquire_for (returns at once; the handler runs exactly
  /// once, never inside the call; per-operation cancellation ends the wait
  /// with operation_aborted and leaves no key). Defined in
  /// <distlock/lock_async.hpp>, which <distlock/simple_lock_async.hpp>
  /// includes.
  using Lock::async_acquire;
  /// As Lock::async_try_acquire_for (see async_acquire).
  using Lock::async_try_acquire_for;

  /// The name it was made with.
  using Lock::name;
  /// True when made by Client::fenced_simple_lock(): acquires hand out fencing
  /// tokens.
  using Lock::fenced;

  /// The same lock as a Lock handle (every member behaves as described here:
  /// hold_count() is 1 or 0).
  const Lock& as_lock() const noexcept { return *this; }

 private:
  friend class Client;  // Client::simple_lock() / Client::fenced_simple_lock()

  // Throws Error(invalid_argument) for an empty or oversized name.
  SimpleLock(std::shared_ptr<sync::Services> client,
             std::string name,
             bool fenced,
             std::chrono::milliseconds lock_delay = std::chrono::milliseconds(0));
};

}  // namespace distlock
