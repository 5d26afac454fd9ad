/// \file
/// distlock::Latch: a countdown latch shared by every Client on one Redis
/// deployment (docs/latch.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include "distlock/wait_time.hpp"

namespace distlock {

namespace sync {
struct Services;
struct LatchNames;
}  // namespace sync

/// A handle to the countdown latch `name`, made by Client::latch(). The
/// factory does no I/O; it throws Error(invalid_argument) for an empty name or
/// one over 65,536 bytes, and Error(closed) on a moved-from Client. Cheap to
/// copy; copies name the same latch.
///
/// On the server (Redisson's RCountDownLatch layout, so both see one latch):
/// the string key `name` holds the count; the channel
/// "redisson_countdownlatch__channel:{name}" (":name" when the name already
/// has a '{') carries "1" when a count is set and "0" when it reaches zero.
/// A latch that was never set, or has counted down to zero, has no key and is
/// open; a later try_set_count() then starts a new round (as Redisson's).
///
/// Waiting: wait*() read the count; while it is above zero they join the
/// channel's waiters, and reaching zero wakes every waiter of every Client in
/// every process at once (Wake::all), each of which re-reads the count. A
/// waiter also re-reads every kRecheck without a message (a safety net for a
/// message lost with a connection; the count is what decides).
///
/// Errors: throwing members throw Error: invalid_argument for a negative count
/// or a negative wait (nothing is sent), timeout / connection_lost when Redis
/// did not answer (a try_set_count or count_down without a reply may or may
/// not have run), server_error for an error reply (a key of another type under
/// the name: WRONGTYPE), closed after Client::close(), and invalid_argument for
/// a blocking wait on the Client's I/O thread. The error_code& forms set ec
/// instead and return false / 0.
///
/// Thread safety: all members may be called from any thread concurrently.
class Latch {
 public:
  /// The longest a waiter goes without re-reading the count.
  static constexpr std::chrono::milliseconds kRecheck{5000};

  ///@{
  /// Sets the count to `count` (>= 0) when none is set: true when this call
  /// set it, false when a count was already set (by any Client). A count of 0
  /// is stored as Redisson does: the latch is open, and further
  /// try_set_count() calls return false until a count_down() removes it.
  bool try_set_count(std::int64_t count);
  bool try_set_count(std::int64_t count, std::error_code& ec);
  ///@}

  ///@{
  /// Counts down by one; reaching zero opens the latch and wakes every waiter.
  /// At zero (or never set) it changes nothing and is not an error.
  void count_down();
  void count_down(std::error_code& ec);
  ///@}

  ///@{
  /// The count now; 0 for an open latch.
  std::int64_t count() const;
  std::int64_t count(std::error_code& ec) const;
  ///@}

  ///@{
  /// Wait until the latch is open (returns at once when it is). The timed
  /// forms return false when `wait` passes / `deadline` comes first; a wait of
  /// zero or a deadline in the past reads the count once.
  void wait();
  void wait(std::error_code& ec);
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& wait) {
    return wait_for_ms(detail::wait_ms(wait));
  }
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& wait, std::error_code& ec) {
    return wait_for_ms(detail::wait_ms(wait), ec);
  }
  bool wait_until(std::chrono::steady_clock::time_point deadline);
  bool wait_until(std::chrono::steady_clock::time_point deadline, std::error_code& ec);
  ///@}

  /// Asynchronous waits, defined in <distlock/latch_async.hpp> (which brings
  /// in Asio). Each returns at once and never blocks a thread: the wait runs
  /// on the Client's I/O thread, on the same loop as wait() (wake-all
  /// message, re-read every kRecheck), with no thread per wait. The handler
  /// runs exactly once, never inside the call, on its associated executor
  /// (default: the Client's I/O thread); any Asio completion token works.
  /// Errors reach the handler, never as exceptions: invalid_argument for a
  /// negative wait (nothing sent), and closed, timeout, connection_lost,
  /// server_error as for wait(). Cancellation (the handler's cancellation
  /// slot, any type but none) completes with asio::error::operation_aborted
  /// and leaves no subscription behind; a wait holds nothing else.
  ///
  /// As wait(): signature void(std::error_code).
  template <class Token>
  auto async_wait(Token&& token);
  /// As wait_for(wait) (rounded up to whole milliseconds; zero reads the
  /// count once): signature void(std::error_code, bool), false with no error
  /// when `wait` passed first.
  template <class Rep, class Period, class Token>
  auto async_wait_for(const std::chrono::duration<Rep, Period>& wait, Token&& token);

  /// The name it was made with.
  const std::string& name() const noexcept;

 private:
  friend class Client;
  Latch(std::shared_ptr<sync::Services> client, std::string name);
  bool wait_for_ms(std::chrono::milliseconds wait);
  bool wait_for_ms(std::chrono::milliseconds wait, std::error_code& ec);

  std::shared_ptr<sync::Services> client_;
  std::shared_ptr<const sync::LatchNames> names_;
};

}  // namespace distlock
