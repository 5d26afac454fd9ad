#include "sync/acquire_loop.hpp"

namespace distlock::sync {

Attempt Attempt::acquired(std::optional<std::uint64_t> token) {
  Attempt a;
  a.kind = Kind::acquired;
  a.token = token;
  return a;
}

Attempt Attempt::contended(std::optional<std::chrono::milliseconds> retry_after) {
  Attempt a;
  a.kind = Kind::contended;
  a.retry_after = retry_after;
  return a;
}

Attempt Attempt::failed(std::error_code ec, std::string message) {
  Attempt a;
  a.kind = Kind::failed;
  a.ec = ec;
  a.message = std::move(message);
  return a;
}

Attempt Attempt::no_reply(std::error_code ec, std::string message) {
  Attempt a = failed(ec, std::move(message));
  a.kind = Kind::no_reply;
  return a;
}

AcquireLoop::AcquireLoop(std::optional<Clock::time_point> deadline,
                         std::chrono::milliseconds fallback,
                         bool has_channel)
    : deadline_(deadline), fallback_(fallback), has_channel_(has_channel) {}

AcquireLoop::Actions AcquireLoop::start() {
  return send();
}

AcquireLoop::Actions AcquireLoop::send() {
  Actions a;
  in_flight_ = true;
  retry_ = false;
  a.send = true;
  return a;
}

AcquireLoop::Actions AcquireLoop::finish(AcquireOutcome outcome) {
  Actions a;
  finished_ = true;
  if (waiting_) {
    waiting_ = false;
    a.leave = true;
    // A waiter that got in used its wake-up; one that gives up passes it on.
    a.pass_signal = !outcome.acquired;
  }
  if (sleeping_) {
    sleeping_ = false;
    a.cancel_sleep = true;
  }
  a.done = std::move(outcome);
  return a;
}

AcquireLoop::Actions AcquireLoop::on_reply(const Attempt& attempt, Clock::time_point now) {
  in_flight_ = false;
  if (finished_) {
    // Aborted while this attempt was in flight: give back what it may hold.
    Actions a;
    a.undo = attempt.kind == Attempt::Kind::acquired || attempt.kind == Attempt::Kind::no_reply;
    return a;
  }
  switch (attempt.kind) {
    case Attempt::Kind::acquired:
      return finish({{}, {}, true, attempt.token});
    case Attempt::Kind::failed:
      return finish({attempt.ec, attempt.message, false, {}});
    case Attempt::Kind::no_reply: {
      // It may have run: never re-send it; undo whatever it did.
      Actions a = finish({attempt.ec, attempt.message, false, {}});
      a.undo = true;
      return a;
    }
    case Attempt::Kind::contended:
      break;
  }
  if (deadline_ && *deadline_ <= now) return finish({});
  // Sleep no longer than the holder's TTL, so a lost message only delays.
  // (+1 ms: a TTL of 0 means "expires within the millisecond".)
  const auto pause =
      attempt.retry_after ? *attempt.retry_after + std::chrono::milliseconds(1) : fallback_;
  sleep_target_ = now + pause;
  if (deadline_ && *deadline_ < *sleep_target_) sleep_target_ = *deadline_;
  if (has_channel_ && !waiting_) {
    // Subscribe before the next attempt, so an unlock after it is not missed.
    waiting_ = true;
    subscribing_ = true;
    Actions a;
    a.subscribe = true;
    return a;
  }
  if (retry_) return send();
  sleeping_ = true;
  Actions a;
  a.sleep_until = sleep_target_;
  return a;
}

AcquireLoop::Actions AcquireLoop::subscribed(Clock::time_point now) {
  subscribing_ = false;
  if (finished_ || in_flight_) return {};
  if (retry_) return send();
  (void)now;
  sleeping_ = true;
  Actions a;
  a.sleep_until = sleep_target_;
  return a;
}

AcquireLoop::Actions AcquireLoop::on_wake(bool message) {
  if (finished_) return {};
  if (in_flight_ || subscribing_) {
    // Retry as soon as the attempt in flight comes back contended. A wake
    // while subscribing is the join of a channel that was confirmed
    // already (another waiter's): a message sent after the last attempt ran
    // on the server but before this join reached the others only, so read
    // again once joined (without this, such a wait slept until its
    // fallback: a lock's TTL, a latch's re-check).
    (void)message;  // either way
    retry_ = true;
    return {};
  }
  if (!sleeping_) return {};
  sleeping_ = false;
  Actions a = send();
  a.cancel_sleep = true;
  return a;
}

AcquireLoop::Actions AcquireLoop::on_granted(const Attempt& granted) {
  if (finished_) return {};
  if (in_flight_) return on_wake(true);
  return finish({{}, {}, true, granted.token});
}

AcquireLoop::Actions AcquireLoop::on_timer() {
  if (finished_ || !sleeping_) return {};
  sleeping_ = false;
  return send();
}

AcquireLoop::Actions AcquireLoop::on_abort(std::error_code ec, std::string message) {
  if (finished_) return {};
  return finish({ec, std::move(message), false, {}});
}

}  // namespace distlock::sync
