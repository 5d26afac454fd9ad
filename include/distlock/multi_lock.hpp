/// \file
/// distlock::MultiLock: several Locks, of any Clients, taken all or nothing;
/// distlock::MultiLease: such a holding owned by a handle (the async forms).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <system_error>
#include <vector>

#include "distlock/lock.hpp"
#include "distlock/wait_time.hpp"

namespace distlock {

namespace detail {
struct MultiLeaseAccess;
}

/// Every part of a MultiLock held by this object rather than by a thread: one
/// handle-owned Lease per part (each with its own random owner id, as
/// Lock::acquire gives), in canonical order. Returned by MultiLock's async
/// forms; it can move between threads and coroutines. Each part's lease is
/// renewed by its Client's watchdog while held.
///
/// Thread safety: const members may be called from any thread concurrently;
/// release() and moves need external synchronisation with other calls on the
/// same MultiLease, as for any C++ object.
class MultiLease {
 public:
  /// An empty holding: valid() is false; release() does nothing.
  MultiLease() noexcept = default;
  /// Internal: made by the async forms from every part's Lease, in canonical
  /// order.
  explicit MultiLease(std::vector<Lease> parts) noexcept;
  /// Releases every part (as release()); never throws.
  ~MultiLease();
  /// Takes other's parts; other becomes empty.
  MultiLease(MultiLease&& other) noexcept;
  /// Releases the parts this object held, then takes other's.
  MultiLease& operator=(MultiLease&& other) noexcept;
  MultiLease(const MultiLease&) = delete;
  MultiLease& operator=(const MultiLease&) = delete;

  ///@{
  /// True while every part's Lease is valid (not released, not lost, its
  /// deadline not passed); false for an empty MultiLease.
  bool valid() const noexcept;
  explicit operator bool() const noexcept { return valid(); }
  ///@}
  /// The earliest part's lease deadline on the steady clock: the whole is
  /// held until then. time_point{} when empty.
  std::chrono::steady_clock::time_point deadline() const noexcept;
  /// Each part's Lease, in canonical order (its stop_token(), its
  /// fencing_token() for a fenced part...). Empty when released.
  const std::vector<Lease>& parts() const noexcept { return parts_; }

  /// Releases every part, in reverse canonical order, going on past any part
  /// that fails. Idempotent and never throws.
  void release() noexcept;
  /// As above, reporting the first failure in release order as
  /// Lease::release(ec) does for that part (lease_lost, timeout,
  /// connection_lost, closed); every other part is released all the same.
  void release(std::error_code& ec) noexcept;
  /// Releases every part, in reverse canonical order, without blocking a
  /// thread. Returns at once; the handler runs exactly once, never inside
  /// this call, with signature void(std::error_code): the first failure, as
  /// release(ec) reports. It runs on its associated executor (default: the
  /// first part's Client's I/O thread). The MultiLease is empty as soon as
  /// this returns. Not cancellable. Defined in <distlock/multi_lock_async.hpp>.
  template <class Token>
  auto async_release(Token&& token);

 private:
  friend struct detail::MultiLeaseAccess;  // the async release takes the parts

  std::vector<Lease> parts_;
};

/// Holds every one of its parts, or none of them. Built only on the public
/// Lock API: each part is an ordinary thread-owned Lock (of any Client, so of
/// any server), and so is each hold. Docs: docs/multi_lock.md.
///
/// Canonical order: the parts are sorted by lock name, then by the server
/// their Client names, resolved (ClientOptions' host looked up with
/// getaddrinfo: the lowest of its numeric "address:port" and the db, or the
/// Unix socket's canonical path and the db; a host that does not resolve
/// counts as its text), and always taken in that order and released in the
/// reverse order. Two multi-locks that share parts therefore never wait for
/// each other in a cycle, whatever order their callers listed the parts in,
/// as long as every process's names of a shared server resolve to the same
/// addresses ("localhost" and "127.0.0.1" are one server where localhost is
/// 127.0.0.1).
///
/// Ownership: like Lock's thread-owned calls, the holds belong to the calling
/// thread (owner "<client-id>:<thread>" on each part's Client). The thread
/// that locked must unlock; another thread's unlock is not_owner. Reentrant as
/// its parts are: a thread that locks twice (or already holds a part as a
/// plain Lock) must unlock as many times. MultiLock satisfies TimedLockable,
/// so std::unique_lock, std::scoped_lock and std::lock_guard work.
///
/// All or nothing: an attempt that does not take every part (contention, a
/// wait that runs out, an error) releases, in reverse order, every part it
/// took before returning, so it leaves no key of its own behind (a part the
/// thread held before the call keeps its earlier holds). A part whose
/// acquire got no reply is undone by Lock itself (its pending release).
///
/// Leases: without an explicit lease every part is renewed by its Client's
/// watchdog. With an explicit lease each part gets that lease from its own
/// acquisition, so the part taken first expires first; when the last part is
/// taken MultiLock checks every part's lease locally (Lock::lease_valid) and,
/// if one has already ended or was lost, releases all and tries again while
/// the wait allows (lock(lease) keeps trying): a successful call returns with
/// every part valid. lease_deadline() gives the earliest part's deadline.
///
/// Errors: contention is never an error (try_* return false). The throwing
/// members throw Error: invalid_argument for a negative wait or a
/// non-positive lease (before anything is sent), and otherwise whatever the
/// failing part's Lock call threw (timeout, connection_lost, closed,
/// server_error, lease_lost...), after releasing what was taken. The
/// error_code& forms set the same codes instead and never throw them; ec is
/// cleared on success and on contention.
///
/// Waits: any duration, rounded up to whole milliseconds as Lock does; a zero
/// wait makes one attempt per part. A try_lock_for(wait) waits for each part
/// with the time left until one common deadline (now + wait), so the whole
/// call never returns false before `wait` has passed and never waits much
/// longer. milliseconds::max() (or a longer wait) waits as long as it takes.
///
/// Thread safety: a MultiLock is a cheap value (one shared pointer); copies
/// share the parts. Any member may be called from any thread concurrently;
/// each thread acquires and releases its own holds.
class MultiLock {
 public:
  /// Throws Error(invalid_argument) when `parts` is empty, or lists one lock
  /// twice: the same name on the same server and db, through one Client or
  /// two, whatever its kind (plain or fenced, or another Lock-like primitive
  /// of that name, which the order could not tell apart). Two Clients name
  /// the same server when their hosts resolve to a shared address on the
  /// same port ("localhost" and "127.0.0.1"), or their Unix socket paths to
  /// one file. Looks each host name up (getaddrinfo, which may ask DNS and
  /// block meanwhile; a name that does not resolve is compared as text, never
  /// an error); sends nothing to Redis.
  explicit MultiLock(std::vector<Lock> parts);

  ///@{
  /// Blocks until this thread holds every part (watchdog leases).
  void lock();
  void lock(std::error_code& ec);
  ///@}
  /// Blocks until held, every part with a fixed `lease` and no watchdog.
  void lock(std::chrono::milliseconds lease);
  /// As lock(lease); a non-positive lease sets invalid_argument.
  void lock(std::chrono::milliseconds lease, std::error_code& ec);
  /// One attempt per part, no waiting: true when this thread now holds every
  /// part; false (having released what it took) as soon as one part is held
  /// by another owner.
  bool try_lock();
  /// As try_lock(): false with ec clear on contention, ec set on failure.
  bool try_lock(std::error_code& ec);
  /// Waits at most `wait` for all parts (watchdog leases). False when not all
  /// were got in time, never before `wait` has passed.
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_lock_for_ms(detail::wait_ms(wait), std::nullopt);
  }
  /// As above: false with ec clear when not got in time, ec set on failure
  /// (invalid_argument for a negative wait).
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait, std::error_code& ec) {
    return try_lock_for(detail::wait_ms(wait), std::nullopt, ec);
  }
  ///@{
  /// Waits at most `wait`; every part gets a fixed lease of `lease`.
  bool try_lock_for(std::chrono::milliseconds wait, std::chrono::milliseconds lease);
  template <class Rep, class Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait,
                    std::chrono::milliseconds lease) {
    return try_lock_for(detail::wait_ms(wait), lease);
  }
  ///@}
  ///@{
  /// Waits at most `wait`; `lease` nullopt is the watchdog lease.
  /// invalid_argument for a negative wait or a non-positive lease.
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
  ///@{
  /// Waits until `deadline` of any clock (watchdog leases); a deadline
  /// already passed makes one attempt per part. The time left is measured
  /// once, at the call.
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

  /// Releases one hold of every part, in reverse canonical order, going on
  /// past any part that fails. Never throws; does nothing for parts this
  /// thread does not hold.
  void unlock() noexcept;
  /// As above, and reports the first failure in release order (ec clear when
  /// every part was released): not_owner when this thread did not hold a
  /// part (as after a part's lease ran out and another owner took it, or an
  /// unlock without a lock), lease_lost when a part's lease was lost before
  /// the unlock, timeout / connection_lost when a part's server did not
  /// answer (that release stays pending and is sent again in the
  /// background, as Lock::unlock(ec) says). Every other part is released
  /// all the same.
  void unlock(std::error_code& ec) noexcept;

  /// Local state of this thread only: no I/O, never throws.
  /// True when this thread holds every part and every part's lease is valid.
  bool lease_valid() const;
  /// The earliest lease deadline among the parts; nullopt when this thread
  /// does not hold every part.
  std::optional<std::chrono::steady_clock::time_point> lease_deadline() const;

  // --- Handle-owned, asynchronous -------------------------------------------
  //
  // An asynchronous operation has no thread to own a hold, so these take
  // every part as a handle-owned Lease (as Lock::async_acquire) and hand the
  // whole over as a MultiLease: not reentrant, and a thread that holds a
  // part through lock() does not own the async form's holding (it waits for
  // that part like any other owner). Parts are taken one after the other in
  // canonical order, as the blocking forms take them, each waiting on its
  // unlock channel; watchdog leases only. All or nothing: when not every
  // part is taken (contention until the deadline, an error, cancellation),
  // every part taken so far is released, in reverse order, before the
  // handler runs, so no key of the operation is left behind (a part whose
  // attempt was in flight is undone by Lock itself). Per-operation
  // cancellation (the handler's cancellation slot: asio::cancel_after,
  // co_spawn cancellation, bind_cancellation_slot) ends the operation with
  // asio::error::operation_aborted and an empty result. Handlers run on their
  // associated executor (default: the first part's Client's I/O thread).
  // Defined in <distlock/multi_lock_async.hpp>.

  /// Takes every part without blocking a thread, waiting as long as it takes.
  /// Returns at once; the handler runs exactly once, never inside this call,
  /// with signature void(std::error_code, distlock::MultiLease): a valid
  /// MultiLease, or an empty one with the failing part's error (timeout,
  /// connection_lost, closed, server_error..., operation_aborted when
  /// cancelled).
  template <class Token>
  auto async_lock(Token&& token);
  /// As async_lock, waiting at most `wait` in all (any duration, rounded up
  /// to whole milliseconds; one common deadline for every part, as
  /// try_lock_for; zero makes one attempt per part; a negative wait completes
  /// with invalid_argument and sends nothing). The handler's signature is
  /// void(std::error_code, std::optional<distlock::MultiLease>): nullopt with
  /// no error when not every part was got in time.
  template <class Rep, class Period, class Token>
  auto async_try_lock_for(const std::chrono::duration<Rep, Period>& wait, Token&& token);

  /// The parts in canonical order (the order they are taken in).
  const std::vector<Lock>& parts() const noexcept { return *parts_; }

 private:
  bool try_lock_for_ms(std::chrono::milliseconds wait,
                       std::optional<std::chrono::milliseconds> lease);

  std::shared_ptr<std::vector<Lock>> parts_;
};

}  // namespace distlock
