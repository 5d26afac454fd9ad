// A release whose outcome is not known yet, settled in the background, and
// the Client's set of them.
#pragma once

#include <asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <unordered_map>

#include "net/completion.hpp"
#include "sync/acquire_loop.hpp"
#include "sync/holding.hpp"
#include "sync/release_call.hpp"

namespace distlock::sync {

// A release of `expected` holds of `state` whose outcome is not known: its
// reply timed out, its connection dropped, or it undoes an acquire that got
// no reply. It is sent again, on the I/O thread, until the server answers
// (release.lua is idempotent per expected count, so repeats are harmless)
// or the Client closes. Until then the holder's next lock or unlock of that
// name waits for it: re-entering a hold whose count on the server is unknown
// would reuse its fencing token and make the counts disagree.
class PendingRelease final : public net::Completion,
                             public std::enable_shared_from_this<PendingRelease> {
 public:
  struct Outcome {
    ReleaseResult result = ReleaseResult::not_held;
    std::error_code ec;  // closed (never settled), server_error or protocol_error
  };

  // Starts the background sends; any thread. `counted_unlock`: the caller's
  // unlock already counted this release. `valid_before`: the lease was valid
  // when that unlock started, so a repeat that finds the hold gone means an
  // earlier send released it.
  static std::shared_ptr<PendingRelease> start(Services& client,
                                               std::shared_ptr<Holding> state,
                                               std::uint32_t expected,
                                               bool counted_unlock,
                                               bool valid_before);

  // As start(), but the first send waits until `previous` (a release of
  // the same holding, one count higher) has settled.
  static std::shared_ptr<PendingRelease> start_after(
      const std::shared_ptr<PendingRelease>& previous,
      Services& client,
      std::shared_ptr<Holding> state,
      std::uint32_t expected,
      bool valid_before);

  PendingRelease(Services& client,
                 std::shared_ptr<Holding> state,
                 std::uint32_t expected,
                 bool counted_unlock,
                 bool valid_before);

  // Not on the I/O thread. Waits until settled or `deadline`; nullopt when
  // not settled by then.
  std::optional<Outcome> wait_until(Clock::time_point deadline);
  // What the unlock that started it reports for `outcome`: success when the
  // server confirmed the release (or, for a last hold valid until the
  // unlock, a repeat found it already gone); lease_lost when the hold was
  // gone otherwise; the outcome's own error when it has one.
  std::error_code reported(const Outcome& outcome) const;
  bool counted_unlock() const noexcept { return counted_unlock_; }
  bool valid_before() const noexcept { return valid_before_; }
  const std::shared_ptr<Holding>& state() const noexcept { return state_; }

  // I/O thread: settles it as closed and stops sending.
  void close();
  // I/O thread: a send waiting out its backoff goes now (the connection is
  // back).
  void kick();
  void complete(std::error_code ec, Value reply) override;

 private:
  void send();
  void send_after(std::chrono::milliseconds delay);
  void settle(Outcome outcome);

  Services& client_;
  const std::shared_ptr<Holding> state_;
  const std::uint32_t expected_;
  const bool counted_unlock_;
  const bool valid_before_;
  // I/O thread only.
  std::shared_ptr<void> call_;
  asio::steady_timer timer_;
  std::shared_ptr<PendingRelease> self_;  // alive while a send or a timer is pending
  int failures_ = 0;
  bool backing_off_ = false;
  bool sending_ = false;  // call_ is queued and has not completed
  // Shared with waiting threads.
  std::mutex mutex_;
  std::condition_variable settled_;
  std::optional<Outcome> outcome_;
  std::shared_ptr<PendingRelease> next_;  // sent once this one settles
};

// The Client's unsettled releases, so close() can settle them all (a timer
// left armed would keep the I/O thread from ending).
class PendingReleases {
 public:
  // False when closed: the caller settles it as closed instead.
  bool add(const std::shared_ptr<PendingRelease>& p);
  void remove(const PendingRelease* p);
  // I/O thread: closes every registered release; later add()s are refused.
  void close();
  // I/O thread: kicks every registered release (after a reconnect).
  void kick_all();
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const PendingRelease*, std::shared_ptr<PendingRelease>> set_;
  bool closed_ = false;
};

}  // namespace distlock::sync
