/// \file
/// distlock::Lock: a reentrant distributed lock (Redisson's RLock layout).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

#include "distlock/lease.hpp"
#include "distlock/wait_time.hpp"

namespace distlock {

namespace sync {
class Primitive;
struct Services;
}  // namespace sync
namespace backend {
class LockEngine;
}
namespace detail {
struct Access;
}

/// A handle to the lock `name`, made by Client::lock() or
/// Client::fenced_lock(). Cheap to copy; copies name the same lock. The
/// handle keeps its Client's state alive but does not keep it open.
///
/// Two ways to hold it:
///  - Thread-owned (lock / try_lock / unlock): the owner is
///    "<client-id>:<thread-number>", as Redisson's RLock, so the same thread
///    may lock again (a hold count), and Java services on Redisson exclude
///    C++ services on distlock for the same name. Lock satisfies the standard
///    TimedLockable requirements: std::unique_lock, std::scoped_lock and
///    try_lock_for work unchanged.
///  - Handle-owned (acquire / try_acquire...): a Lease with its own random
///    owner id that can move between threads and coroutines.
///
/// Without an explicit lease the lock is taken for
/// ClientOptions::watchdog_timeout and renewed by the Client's watchdog every
/// third of it until released; with an explicit lease it simply expires then.
///
/// Waiting does not poll: a waiter subscribes to the lock's unlock channel and
/// retries when a release is published, and otherwise sleeps no longer than
/// the holder's remaining TTL.
///
/// Errors: contention is never an error (try_* return false / nullopt).
/// Throwing members throw Error: invalid_argument for a non-positive lease or
/// wait, server_error naming WRONGTYPE when the key holds another type,
/// timeout / connection_lost when Redis did not answer, closed after
/// Client::close(). An acquire that may have reached the server but got no
/// reply is never re-sent; a best-effort release of that attempt is sent.
///
/// Thread safety: all members may be called from any thread concurrently.
class Lock {
 public:
  // --- Thread-owned ---------------------------------------------------------
  //
  // Every blocking call below comes in two forms: one throws Error, the other
  // takes a std::error_code& and never throws for the errors listed in the
  // class comment (ec is cleared on success). Contention is not an error for
  // either: a try_* that did not get the lock returns false with ec clear.
  //
  // Waits: any std::chrono::duration is accepted and rounded UP to whole
  // milliseconds, so a 1 us wait waits 1 ms (one attempt, then at most 1 ms);
  // only a zero wait makes exactly one attempt and no wait at all. A negative
  // wait is invalid_argument (nothing is sent).

  ///@{
  /// Blocks until this thread holds the lock (watchdog lease).
  void lock();
  void lock(std::error_code& ec);
  ///@}
  /// Blocks until held, with a fixed lease and no watchdog.
  void lock(std::chrono::milliseconds lease);
  /// As lock(lease); a non-positive lease sets invalid_argument.
  void lock(std::chrono::milliseconds lease, std::error_code& ec);
  /// One attempt, no waiting. True when this thread now holds the lock.
  bool try_lock();
  /// As try_lock(): true when held; false with ec clear when another owner
  /// holds it; false with ec set when the attempt failed.
  bool try_lock(std::error_code& ec);
  /// Waits at most `wait` (watchdog lease). False when it did not get it in
  /// time; never returns false before `wait` has passed.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_lock_for_ms(detail::wait_ms(wait), std::nullopt);
  }
  /// As above: false with ec clear when not got in time, false with ec set
  /// on failure (invalid_argument for a negative wait).
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait, std::error_code& ec) {
    return try_lock_for(detail::wait_ms(wait), std::nullopt, ec);
  }
  ///@{
  /// Waits at most `wait`; holds with a fixed lease of `lease` (no watchdog).
  bool try_lock_for(std::chrono::milliseconds wait, std::chrono::milliseconds lease);
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait,
                    std::chrono::milliseconds lease) {
    return try_lock_for(detail::wait_ms(wait), lease);
  }
  ///@}
  ///@{
  /// Waits at most `wait`; `lease` nullopt is the watchdog lease. False with
  /// ec clear when not got in time; invalid_argument for a negative wait or a
  /// non-positive lease.
  bool try_lock_for(std::chrono::milliseconds wait,
                    std::optional<std::chrono::milliseconds> lease,
                    std::error_code& ec);
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait,
                    std::optional<std::chrono::milliseconds> lease,
                    std::error_code& ec) {
    return try_lock_for(detail::wait_ms(wait), lease, ec);
  }
  ///@}
  /// Waits until `deadline` of any clock (watchdog lease); a deadline already
  /// passed makes one attempt. The time left is measured once, at the call.
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_for(detail::time_left(deadline));
  }
  /// As above: false with ec clear when not got in time, ec set on failure.
  template <class Clock, class Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline,
                      std::error_code& ec) {
    return try_lock_for(detail::time_left(deadline), ec);
  }
  /// Releases one hold of this thread. Never throws (std::unique_lock calls
  /// it from a destructor); does nothing when this thread does not hold it.
  void unlock() noexcept;
  /// As above, reporting: success only when the server released it;
  /// not_owner when this thread does not hold the lock (which stays as it
  /// is); lease_lost when this thread's lease was lost before the unlock;
  /// timeout / connection_lost when no reply came. The unlock counts all the
  /// same: its release stays pending and the Client sends it again in the
  /// background until the server answers. Calling unlock(ec) again after the
  /// thread's last unlock timed out waits (up to one command_timeout) for
  /// that release and reports how it ended, never not_owner meanwhile. The
  /// thread's next lock of this name waits for it too and then takes a new
  /// holding (a new fencing token). See docs/lock.md, "Release pending".
  void unlock(std::error_code& ec) noexcept;

  /// Whoever holds it: deletes the lock and wakes the waiters. True when a
  /// lock was deleted, false when there was none.
  bool force_unlock();
  /// As above; false with ec set when it failed (the lock may or may not
  /// have been deleted after timeout / connection_lost).
  bool force_unlock(std::error_code& ec);

  // Queries: one round trip each, reading the server's state (not this
  // process's view). Each has an error_code& form that returns the "empty"
  // answer (false, 0, nullopt) with ec set on failure; server_error names
  // WRONGTYPE when the key holds another type.

  ///@{
  /// Held by anyone.
  bool is_locked() const;
  bool is_locked(std::error_code& ec) const;
  ///@}
  ///@{
  /// Held by this thread (the server has this thread's owner field).
  bool is_held_by_current_thread() const;
  bool is_held_by_current_thread(std::error_code& ec) const;
  ///@}
  ///@{
  /// This thread's hold count (0 when not held).
  std::uint32_t hold_count() const;
  std::uint32_t hold_count(std::error_code& ec) const;
  ///@}
  ///@{
  /// The lock's remaining TTL; nullopt when not locked,
  /// milliseconds::max() when the key has no expiry.
  std::optional<std::chrono::milliseconds> remaining_ttl() const;
  std::optional<std::chrono::milliseconds> remaining_ttl(std::error_code& ec) const;
  ///@}
  /// The calls below read only this thread's local state: no I/O, never throw.
  /// This thread's fencing token while it holds a fenced lock.
  std::optional<std::uint64_t> fencing_token() const;
  /// Requested when this thread's lease is lost; a never-requested token when
  /// this thread does not hold the lock.
  std::stop_token stop_token() const;
  /// Whether this thread's lease is still held (not lost, deadline not passed).
  bool lease_valid() const;
  /// This thread's lease deadline on the steady clock (counted from when the
  /// acquire or last confirmed renewal was sent); nullopt when not held.
  std::optional<std::chrono::steady_clock::time_point> lease_deadline() const;

  // --- Handle-owned ----------------------------------------------------------
  //
  // Errors and waits as for the thread-owned calls above: the error_code&
  // forms never throw for the listed errors and return nullopt (or an empty
  // Lease) with ec set on failure; nullopt with ec clear means "held by
  // someone else" (contention). Waits of any duration round up to whole
  // milliseconds; a negative wait is invalid_argument.

  /// Blocks until held; the Lease is renewed by the watchdog.
  Lease acquire();
  /// As acquire(); an empty Lease (valid() false) with ec set on failure.
  Lease acquire(std::error_code& ec);
  ///@{
  /// One attempt; nullopt when someone else holds it.
  std::optional<Lease> try_acquire();
  std::optional<Lease> try_acquire(std::error_code& ec);
  ///@}
  ///@{
  /// Waits at most `wait`; with `lease`, a fixed lease and no watchdog.
  /// nullopt when not got in time, never before `wait` has passed.
  std::optional<Lease> try_acquire_for(std::chrono::milliseconds wait);
  template <class Rep, class Period>
  std::optional<Lease> try_acquire_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_acquire_for(detail::wait_ms(wait));
  }
  template <class Rep, class Period>
  std::optional<Lease> try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                       std::error_code& ec) {
    return try_acquire_for(detail::wait_ms(wait), std::nullopt, ec);
  }
  std::optional<Lease> try_acquire_for(std::chrono::milliseconds wait,
                                       std::chrono::milliseconds lease);
  template <class Rep, class Period>
  std::optional<Lease> try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                       std::chrono::milliseconds lease) {
    return try_acquire_for(detail::wait_ms(wait), lease);
  }
  ///@}
  ///@{
  /// `lease` nullopt is the watchdog lease; invalid_argument for a negative
  /// wait or a non-positive lease.
  std::optional<Lease> try_acquire_for(std::chrono::milliseconds wait,
                                       std::optional<std::chrono::milliseconds> lease,
                                       std::error_code& ec);
  template <class Rep, class Period>
  std::optional<Lease> try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                       std::optional<std::chrono::milliseconds> lease,
                                       std::error_code& ec) {
    return try_acquire_for(detail::wait_ms(wait), lease, ec);
  }
  ///@}

  /// Acquires without blocking a thread. Returns at once; the handler runs
  /// exactly once, never inside this call, with signature
  /// void(std::error_code, distlock::Lease), on the handler's associated
  /// executor (default: the Client's I/O thread). Waits as long as it takes.
  /// Works with any Asio completion token. Per-operation cancellation (the
  /// handler's cancellation slot: asio::cancel_after, co_spawn cancellation,
  /// bind_cancellation_slot) ends the wait with asio::error::operation_aborted
  /// and an empty Lease, leaving no subscription, no renewal and no key (an
  /// attempt in flight that turns out to have acquired is released). Defined
  /// in <distlock/lock_async.hpp>.
  template <class Token>
  auto async_acquire(Token&& token);
  /// As async_acquire, waiting at most `wait` (any duration, rounded up to
  /// whole milliseconds; zero makes one attempt; a negative wait completes
  /// with invalid_argument, as the blocking forms fail): the handler's
  /// signature is void(std::error_code, std::optional<distlock::Lease>),
  /// nullopt with no error when it was not acquired in time. Cancellation as
  /// above.
  template <class Rep, class Period, class Token>
  auto async_try_acquire_for(const std::chrono::duration<Rep, Period>& wait, Token&& token);

  /// The name it was made with.
  const std::string& name() const noexcept;
  /// True when made by a fenced_* factory: acquires hand out fencing tokens.
  bool fenced() const noexcept;

 private:
  // The library makes Locks and reads their parts through detail::Access
  // (end of client.hpp).
  friend struct detail::Access;

  // The reentrant lock `name` (Client::lock() / Client::fenced_lock()).
  Lock(std::shared_ptr<sync::Services> client, std::string name, bool fenced);
  // A handle to another lock-like primitive with Lock's API (a fair lock, a
  // read-write lock's side, a SET NX lock).
  Lock(std::shared_ptr<sync::Services> client, std::shared_ptr<const sync::Primitive> primitive);
  // A lock of a backend other than Redis (ClientOptions::backend): every
  // member forwards to `engine`; client_ and primitive_ stay null.
  explicit Lock(std::shared_ptr<backend::LockEngine> engine);

  bool try_lock_for_ms(std::chrono::milliseconds wait,
                       std::optional<std::chrono::milliseconds> lease);

  std::shared_ptr<sync::Services> client_;
  std::shared_ptr<const sync::Primitive> primitive_;
  std::shared_ptr<backend::LockEngine> engine_;
};

}  // namespace distlock
