// The acquire loop as a pure state machine: which attempt to send, when to
// subscribe, sleep, retry, undo and finish. No I/O and no clock of its own
// (the caller passes `now`), so it is unit-tested by feeding it replies and
// times. AcquireOp drives it for every primitive.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>

namespace distlock::sync {

using Clock = std::chrono::steady_clock;

// What one acquire attempt found, as the primitive's step reads its reply.
struct Attempt {
  enum class Kind {
    acquired,   // held now; `token` when the primitive hands out fencing tokens
    contended,  // someone else holds it; `retry_after` when the server knows
    failed,     // an error reply or a reply that makes no sense: `ec`, `message`
    no_reply,   // timeout / connection_lost: it may have run (never re-sent)
  };
  Kind kind = Kind::failed;
  std::optional<std::chrono::milliseconds> retry_after;
  std::error_code ec;
  std::string message;
  std::optional<std::uint64_t> token;

  static Attempt acquired(std::optional<std::uint64_t> token);
  static Attempt contended(std::optional<std::chrono::milliseconds> retry_after);
  static Attempt failed(std::error_code ec, std::string message);
  static Attempt no_reply(std::error_code ec, std::string message);
};

struct AcquireOutcome {
  std::error_code ec;
  std::string message;  // for ec: names the problem (e.g. the WRONGTYPE reply)
  bool acquired = false;
  std::optional<std::uint64_t> token;
};

class AcquireLoop {
 public:
  // What the driver does next, in this order: undo, leave, cancel_sleep,
  // send, subscribe (then call subscribed()), sleep_until, done.
  struct Actions {
    bool undo = false;         // send the undo of the attempt that got no reply
    bool leave = false;        // leave the channel's waiters...
    bool pass_signal = false;  // ...passing an unused wake-up on
    bool cancel_sleep = false;
    bool send = false;       // send an attempt now
    bool subscribe = false;  // join the channel's waiters, then call subscribed()
    std::optional<Clock::time_point> sleep_until;
    std::optional<AcquireOutcome> done;  // the operation's outcome (exactly once)
  };

  // `deadline`: nullopt waits as long as it takes; a time in the past makes
  // exactly one attempt. `fallback`: how long to sleep when a contended reply
  // gives no retry_after. `has_channel`: false for primitives that only sleep
  // (a rate limiter).
  AcquireLoop(std::optional<Clock::time_point> deadline,
              std::chrono::milliseconds fallback,
              bool has_channel);

  Actions start();
  // The reply to the attempt in flight (or its absence: Kind::no_reply).
  Actions on_reply(const Attempt& attempt, Clock::time_point now);
  // The driver has joined the channel's waiters (after Actions::subscribe).
  Actions subscribed(Clock::time_point now);
  // A wake-up: `message` true for a message meant for this waiter, false
  // when the subscription was (re)confirmed.
  Actions on_wake(bool message);
  // A message handed the holding over (AcquireStep::interpret_message): done,
  // acquired, when no attempt is in flight; otherwise as on_wake(true) (the
  // attempt's reply, or the retry after it, finds the holding).
  Actions on_granted(const Attempt& granted);
  // The sleep ended.
  Actions on_timer();
  // Ends the operation with `ec` (the Client closing, the server refusing
  // the subscription, cancellation). An attempt still in flight is undone
  // when its reply says it acquired, or gives no answer.
  Actions on_abort(std::error_code ec, std::string message);

  bool in_flight() const noexcept { return in_flight_; }
  bool finished() const noexcept { return finished_; }

 private:
  Actions send();
  Actions finish(AcquireOutcome outcome);

  const std::optional<Clock::time_point> deadline_;
  const std::chrono::milliseconds fallback_;
  const bool has_channel_;
  bool in_flight_ = false;
  bool waiting_ = false;      // joined the channel's waiters
  bool subscribing_ = false;  // between Actions::subscribe and subscribed()
  bool sleeping_ = false;
  bool retry_ = false;  // a message came while an attempt was in flight
  bool finished_ = false;
  std::optional<Clock::time_point> sleep_target_;
};

}  // namespace distlock::sync
