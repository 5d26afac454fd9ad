// One acquire of a lock, waiting if asked: the state machine behind lock(),
// try_lock_for(), acquire() and async_acquire(). Runs on the I/O thread after
// the first attempt is sent.
#pragma once

#include <array>
#include <asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "net/completion.hpp"
#include "runtime/lease_state.hpp"
#include "runtime/waiters.hpp"
#include "script/script.hpp"

namespace distlock::detail {

class PendingRelease;

struct AcquireOutcome {
  std::error_code ec;
  std::string message;  // for ec: names the problem (e.g. the WRONGTYPE reply)
  bool acquired = false;
  std::optional<std::uint64_t> token;
};

// Attempt -> (contended) subscribe to the unlock channel -> retry on each
// unlock message or when the holder's TTL runs out -> until acquired, the
// deadline passes, or an error. On success the lease is confirmed and
// activated in the watchdog before `done` runs.
//
// An attempt that may have reached the server without a reply (timeout,
// connection lost) is never re-sent: the op fails, and a cleanup that removes
// the holding that attempt may have made is sent after it on the same
// connection.
class AcquireOp final : public net::Completion,
                        public Waiter,
                        public std::enable_shared_from_this<AcquireOp> {
 public:
  using Done = std::function<void(AcquireOutcome)>;

  // `count_after`: the owner's hold count if this acquire succeeds.
  // `deadline`: nullopt waits as long as it takes; a time in the past makes
  // exactly one attempt.
  AcquireOp(ClientImpl& client,
            std::shared_ptr<LeaseState> state,
            std::uint32_t count_after,
            std::optional<Clock::time_point> deadline,
            Done done);

  // Sends the first attempt; any thread. `done` runs exactly once, on the I/O
  // thread, or on the system executor when the first attempt cannot be queued.
  void start();

  void wake() override;
  void fail(std::error_code ec, std::string message) override;
  void complete(std::error_code ec, Value reply) override;

  // After `done` ran: for an attempt that got no reply, the release that
  // undoes it, still being settled in the background; otherwise null.
  const std::shared_ptr<PendingRelease>& cleanup() const noexcept { return cleanup_; }

 private:
  std::error_code attempt();
  void contended(std::int64_t pttl);
  void sleep_until(Clock::time_point t);
  void finish(AcquireOutcome outcome);
  void send_cleanup();

  ClientImpl& client_;
  std::shared_ptr<LeaseState> state_;
  const std::uint32_t count_after_;
  const std::optional<Clock::time_point> deadline_;
  Done done_;
  std::array<std::string_view, 2> keys_;
  std::size_t key_count_;
  std::array<std::string_view, 2> args_;
  std::optional<script::ScriptCall> call_;
  Clock::time_point sent_;
  std::shared_ptr<AcquireOp> self_;  // alive while an attempt or a sleep is pending
  std::optional<asio::steady_timer> timer_;
  bool in_flight_ = false;
  bool waiting_ = false;   // registered with Waiters
  bool sleeping_ = false;  // timer armed
  bool retry_ = false;     // woken while an attempt was in flight
  bool finished_ = false;
  std::shared_ptr<PendingRelease> cleanup_;
};

}  // namespace distlock::detail
