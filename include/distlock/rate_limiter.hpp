/// \file
/// distlock::RateLimiter: a rate limiter decided on the Redis server's clock,
/// shared by every Client on one deployment (docs/rate_limiter.md).
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
}

/// A handle to the rate limiter `name`, made by Client::rate_limiter(). The
/// factory does no I/O; it throws Error(invalid_argument) for an empty name or
/// one over 65,536 bytes, and Error(closed) on a moved-from Client. Cheap to
/// copy; copies name the same limiter.
///
/// Algorithm: GCRA (the generic cell rate algorithm) with burst = the rate:
/// `permits` per `interval`, refilled evenly (one permit every
/// interval / permits, to the microsecond), and a fresh or idle limiter
/// admits `permits` at once. Every decision is one Lua script on the server
/// reading the server's TIME, so client clocks play no part and concurrent
/// acquires from any number of Clients and processes are exact.
///
/// On the server: one hash `name` with fields rate, interval (ms), debt and ts
/// (docs/rate_limiter.md): O(1) memory whatever the rate. No expiry: the
/// configuration stays until the key is deleted.
///
/// Waiting: a refused acquire gets from the server how long until n permits
/// are due, sleeps exactly that long (+1 ms) and tries again; there is no
/// channel and no polling. try_acquire_for gives up at once (returns false)
/// when the server's wait is longer than what is left of `wait`.
///
/// Errors: throwing members throw Error; invalid_argument naming the problem
/// for permits <= 0, interval <= 0, permits * interval over 2^53 / 1000
/// (the server's arithmetic must stay exact), n <= 0 or a negative wait
/// (nothing sent), and, from the server, for n > the rate or a limiter with no
/// rate set (nothing consumed); timeout / connection_lost when Redis did not
/// answer — an acquire without a reply may have consumed its permits, and they
/// are NOT given back; server_error for an error reply (WRONGTYPE: another
/// type under the name); closed after Client::close(); invalid_argument for a
/// blocking acquire on the Client's I/O thread. The error_code& forms set ec
/// instead and return false / 0.
///
/// Thread safety: all members may be called from any thread concurrently.
class RateLimiter {
 public:
  ///@{
  /// Configures `permits` per `interval` when no rate is set: true when this
  /// call set it, false when a rate was already set (by any Client; the
  /// existing rate is kept).
  bool try_set_rate(std::int64_t permits, std::chrono::milliseconds interval);
  bool try_set_rate(std::int64_t permits, std::chrono::milliseconds interval, std::error_code& ec);
  ///@}

  ///@{
  /// Takes n permits if the server has them now: true when taken, false (and
  /// nothing taken) when not.
  bool try_acquire(std::int64_t n = 1);
  bool try_acquire(std::int64_t n, std::error_code& ec);
  ///@}

  ///@{
  /// Takes n permits, waiting until the server says they are due, for at most
  /// `wait`; false (nothing taken) when they are not due within it.
  template <class Rep, class Period>
  bool try_acquire_for(std::int64_t n, const std::chrono::duration<Rep, Period>& wait) {
    return try_acquire_for_ms(n, detail::wait_ms(wait));
  }
  template <class Rep, class Period>
  bool try_acquire_for(std::int64_t n,
                       const std::chrono::duration<Rep, Period>& wait,
                       std::error_code& ec) {
    return try_acquire_for_ms(n, detail::wait_ms(wait), ec);
  }
  bool try_acquire_until(std::int64_t n, std::chrono::steady_clock::time_point deadline);
  bool try_acquire_until(std::int64_t n,
                         std::chrono::steady_clock::time_point deadline,
                         std::error_code& ec);
  ///@}

  ///@{
  /// Takes n permits, waiting as long as it takes.
  void acquire(std::int64_t n = 1);
  void acquire(std::int64_t n, std::error_code& ec);
  ///@}

  ///@{
  /// How many permits a try_acquire would get now (server's clock).
  /// invalid_argument when no rate is set.
  std::int64_t available_permits() const;
  std::int64_t available_permits(std::error_code& ec) const;
  ///@}

  /// Asynchronous acquires, defined in <distlock/rate_limiter_async.hpp>
  /// (which brings in Asio). Each returns at once and never blocks a thread:
  /// the wait is a timer on the Client's I/O thread set to the server's wait,
  /// as acquire() sleeps, with no thread per wait. The handler runs exactly
  /// once, never inside the call, on its associated executor (default: the
  /// Client's I/O thread); any Asio completion token works. Errors reach the
  /// handler, never as exceptions: invalid_argument for n <= 0 or a negative
  /// wait (nothing sent) and, from the server, for n > the rate or no rate
  /// set (nothing consumed); closed, timeout, connection_lost, server_error
  /// as for acquire(). Cancellation (the handler's cancellation slot, any
  /// type but none) completes with asio::error::operation_aborted and
  /// consumes nothing more; an attempt already in flight is not taken back
  /// when its reply says it consumed its permits (as a lost reply: a rate
  /// limiter has no holding, and handing permits back could let more than
  /// the rate through), so a cancelled acquire consumes n or nothing.
  ///
  /// As acquire(n): signature void(std::error_code).
  template <class Token>
  auto async_acquire(std::int64_t n, Token&& token);
  /// As try_acquire_for(n, wait) (rounded up to whole milliseconds; zero
  /// makes one attempt): signature void(std::error_code, bool), false with
  /// no error (nothing consumed) when the server's wait outlasts `wait`.
  template <class Rep, class Period, class Token>
  auto async_try_acquire_for(std::int64_t n,
                             const std::chrono::duration<Rep, Period>& wait,
                             Token&& token);

  /// The name it was made with.
  const std::string& name() const noexcept { return *name_; }

 private:
  friend class Client;
  RateLimiter(std::shared_ptr<sync::Services> client, std::string name);
  bool try_acquire_for_ms(std::int64_t n, std::chrono::milliseconds wait);
  bool try_acquire_for_ms(std::int64_t n, std::chrono::milliseconds wait, std::error_code& ec);
  /// The acquire of n until `deadline` (nullopt: no deadline); sets ec and
  /// `what` on failure.
  bool run(std::int64_t n,
           const std::chrono::steady_clock::time_point* deadline,
           std::error_code& ec,
           std::string& what);

  std::shared_ptr<sync::Services> client_;
  std::shared_ptr<const std::string> name_;
};

}  // namespace distlock
