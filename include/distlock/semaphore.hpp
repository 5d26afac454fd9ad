/// \file
/// distlock::Semaphore: a counting semaphore on Redis whose permits come back
/// when their holder dies, and distlock::Permit, a handle-owned holding of
/// permits with its own lease. Layout and faults: docs/semaphore.md.
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
struct Services;
class SemaphoreState;
}  // namespace sync

/// Permits held by one handle rather than by the Client: acquired by
/// Semaphore::acquire_permit() / try_acquire_permit(). It has its own holder
/// id on the server and its own lease: a fixed lease (never renewed: the
/// permits return to the semaphore when it runs out, as Redisson's
/// permit-expirable semaphore) or, when none was given, the watchdog's,
/// renewed while the Client lives.
///
/// Thread safety: const members from any thread; release() and moves need
/// external synchronisation, as for any C++ object.
class Permit {
 public:
  /// An empty Permit: valid() is false, release() does nothing.
  Permit() noexcept;
  /// Internal: made by the acquire calls.
  Permit(std::shared_ptr<runtime::LeaseState> state, std::int64_t permits) noexcept;
  /// Releases (as release()); never throws.
  ~Permit();
  /// Takes other's permits; other becomes empty.
  Permit(Permit&& other) noexcept;
  /// Releases what this object held, then takes other's.
  Permit& operator=(Permit&& other) noexcept;
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;

  ///@{
  /// True while held: not released, not lost, deadline not passed.
  bool valid() const noexcept;
  explicit operator bool() const noexcept { return valid(); }
  ///@}
  /// How many permits it holds (0 for an empty Permit).
  std::int64_t permits() const noexcept { return permits_; }
  /// The lease deadline on the steady clock (from when the acquire, or the
  /// last confirmed renewal, was sent); time_point{} when empty.
  std::chrono::steady_clock::time_point deadline() const noexcept;
  /// Requested the moment the lease is lost: a fixed lease ran out, or a
  /// renewal found the holding gone. Not on a normal release.
  std::stop_token stop_token() const noexcept;
  /// The semaphore's name; empty for an empty Permit.
  const std::string& name() const noexcept;

  /// Gives the permits back. Idempotent (a second call does nothing and
  /// reports nothing) and never throws; failures are ignored (the lease then
  /// ends on the server by itself and the permits return).
  void release() noexcept;
  /// As above, but reports: lease_lost when the lease had ended first (the
  /// permits were already given back by the server); connection_lost /
  /// timeout / closed when the release could not be confirmed.
  void release(std::error_code& ec) noexcept;

 private:
  // The holding of the permits, released as any Lease, and their number.
  Lease lease_;
  std::int64_t permits_ = 0;
};

/// A counting semaphore named `name`, shared by every Client of the server.
/// Made by Client::semaphore(name); cheap to copy (copies are the same
/// semaphore of the same Client).
///
/// Layout (docs/semaphore.md): the key `name` holds the available permits (a
/// string integer, as Redisson's RSemaphore), the zset
/// `distlock_sem_holders:{name}` each holder's lease deadline on the
/// server's clock, the hash `distlock_sem_counts:{name}` the count of each
/// holder that holds other than 1; waiters listen on `redisson_sc:{name}`.
/// The permits of holders whose lease has ended (a dead process's) are
/// given back by the first acquire that would otherwise wait, and by
/// available_permits(), drain_permits() and add_permits().
///
/// Permits taken by acquire()/try_acquire*() are held by the Client: any of
/// its threads may release them. They are leased for
/// ClientOptions::watchdog_timeout and renewed by the watchdog while the
/// Client lives; a process that dies gives them back when the lease ends.
///
/// Counts: every `n` must be > 0, else Error(invalid_argument) (or ec) before
/// any I/O. Waiting is all-or-nothing: a waiter for n never holds part of n.
/// It wakes on releases (a release of k wakes up to k waiters) and on
/// positive add_permits, and otherwise retries when the earliest holder's
/// lease could end.
///
/// Every call but the factory does I/O and blocks the calling thread (never
/// call them on the Client's I/O thread: invalid_argument). Errors: closed,
/// timeout, connection_lost, server_error (e.g. `name` holds another type).
/// Thread safety: all members, from any thread.
class Semaphore {
 public:
  /// Internal: made by Client::semaphore(name).
  Semaphore(std::shared_ptr<sync::Services> client, std::string name);

  /// The name it was made with.
  const std::string& name() const noexcept;

  ///@{
  /// Sets the available permits to `permits` (>= 0) unless the semaphore
  /// exists already: true only for the first call on that name, from any
  /// Client. Negative: invalid_argument.
  bool try_set_permits(std::int64_t permits);
  bool try_set_permits(std::int64_t permits, std::error_code& ec);
  ///@}
  ///@{
  /// Adds `delta` (non-zero; may be negative, and the available count may go
  /// below zero). A positive delta wakes waiters. 0: invalid_argument.
  void add_permits(std::int64_t delta);
  void add_permits(std::int64_t delta, std::error_code& ec);
  ///@}
  ///@{
  /// The available permits now (may be negative); permits of holders whose
  /// lease ended are given back first.
  std::int64_t available_permits() const;
  std::int64_t available_permits(std::error_code& ec) const;
  ///@}
  ///@{
  /// Takes every available permit away and returns how many (0 when none).
  /// Held permits are untouched and come back when released.
  std::int64_t drain_permits();
  std::int64_t drain_permits(std::error_code& ec);
  ///@}

  ///@{
  /// Waits as long as it takes for n permits, held by this Client.
  void acquire(std::int64_t n = 1);
  void acquire(std::int64_t n, std::error_code& ec);
  ///@}
  ///@{
  /// One attempt: true when it took n; false takes nothing.
  bool try_acquire(std::int64_t n = 1);
  bool try_acquire(std::int64_t n, std::error_code& ec);
  ///@}
  ///@{
  /// Waits up to `wait` / until `deadline`; false took nothing.
  /// A negative wait is invalid_argument.
  template <class Rep, class Period>
  bool try_acquire_for(std::int64_t n, std::chrono::duration<Rep, Period> wait) {
    return try_acquire_for_ms(n, detail::wait_ms(wait));
  }
  template <class Rep, class Period>
  bool try_acquire_for(std::int64_t n,
                       std::chrono::duration<Rep, Period> wait,
                       std::error_code& ec) {
    return try_acquire_for_ms(n, detail::wait_ms(wait), ec);
  }
  bool try_acquire_until(std::int64_t n, std::chrono::steady_clock::time_point deadline);
  bool try_acquire_until(std::int64_t n,
                         std::chrono::steady_clock::time_point deadline,
                         std::error_code& ec);
  ///@}

  ///@{
  /// Gives back n of the permits this Client holds. More than it holds:
  /// Error(not_owner), nothing changed. lease_lost when its lease had ended
  /// (the server gave its permits back already; it then holds none).
  void release(std::int64_t n = 1);
  void release(std::int64_t n, std::error_code& ec);
  ///@}
  /// How many permits this Client holds of this semaphore (local; no I/O).
  std::int64_t held_permits() const;

  ///@{
  /// Expiring permits: n permits held by the returned Permit under its own
  /// holder id, with a fixed `lease` (> 0; not renewed) or, when none, the
  /// watchdog's. acquire_permit waits as long as it takes;
  /// try_acquire_permit up to `wait` (nullopt: none came in time; a
  /// negative wait is invalid_argument).
  Permit acquire_permit(std::int64_t n,
                        std::optional<std::chrono::milliseconds> lease = std::nullopt);
  std::optional<Permit> try_acquire_permit(
      std::int64_t n,
      std::chrono::milliseconds wait,
      std::optional<std::chrono::milliseconds> lease = std::nullopt);
  ///@}

  // Asynchronous forms, defined in <distlock/semaphore_async.hpp> (which
  // brings in Asio). Each returns at once and never blocks a thread: the
  // waits run on the Client's I/O thread, on the same acquire loop as the
  // blocking forms (pub/sub wake-ups, no polling, no thread per wait). The
  // handler runs exactly once, never inside the call, on its associated
  // executor (default: the Client's I/O thread). Any Asio completion token
  // works (callbacks, asio::use_future, asio::use_awaitable, ...).
  //
  // Errors reach the handler, never as exceptions: invalid_argument for
  // n <= 0, a negative wait or a lease <= 0 (nothing sent); closed,
  // timeout, connection_lost, server_error as for the blocking forms.
  //
  // Cancellation (the handler's cancellation slot, any type but none: e.g.
  // asio::cancel_after, co_spawn cancellation, bind_cancellation_slot)
  // completes the wait with asio::error::operation_aborted and leaves
  // nothing held: no subscription, no renewal, and an attempt in flight that
  // turns out to have taken permits gives them back (as a background
  // release, once its reply comes; one whose reply never comes is given back
  // with the holder, at the latest when its lease ends).

  /// As acquire(n): n permits held by this Client. Signature
  /// void(std::error_code).
  template <class Token>
  auto async_acquire(std::int64_t n, Token&& token);
  /// As try_acquire_for(n, wait) (any duration, rounded up to whole
  /// milliseconds; zero makes one attempt): signature
  /// void(std::error_code, bool), false with no error when n permits did not
  /// come in time (nothing taken).
  template <class Rep, class Period, class Token>
  auto async_try_acquire_for(std::int64_t n,
                             const std::chrono::duration<Rep, Period>& wait,
                             Token&& token);
  ///@{
  /// As acquire_permit(n) (the watchdog's lease) / acquire_permit(n, lease)
  /// (a fixed lease, > 0): signature void(std::error_code, distlock::Permit),
  /// an empty Permit with the error. Waits as long as it takes.
  template <class Token>
  auto async_acquire_permit(std::int64_t n, Token&& token);
  template <class Token>
  auto async_acquire_permit(std::int64_t n, std::chrono::milliseconds lease, Token&& token);
  ///@}
  ///@{
  /// As try_acquire_permit(n, wait[, lease]): signature
  /// void(std::error_code, std::optional<distlock::Permit>), nullopt with no
  /// error when none came in time.
  template <class Rep, class Period, class Token>
  auto async_try_acquire_permit(std::int64_t n,
                                const std::chrono::duration<Rep, Period>& wait,
                                Token&& token);
  template <class Rep, class Period, class Token>
  auto async_try_acquire_permit(std::int64_t n,
                                const std::chrono::duration<Rep, Period>& wait,
                                std::chrono::milliseconds lease,
                                Token&& token);
  ///@}

 private:
  bool try_acquire_for_ms(std::int64_t n, std::chrono::milliseconds wait);
  bool try_acquire_for_ms(std::int64_t n, std::chrono::milliseconds wait, std::error_code& ec);

  std::shared_ptr<sync::SemaphoreState> state_;
};

}  // namespace distlock
