// The part of an acquire that belongs to one primitive: which script with
// which KEYS/ARGV, how to read its reply, how to undo an attempt that got no
// reply, and which channel wakes its waiters how. No I/O: AcquireOp runs the
// shared loop (AcquireLoop) around it.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "distlock/metrics.hpp"
#include "distlock/value.hpp"
#include "runtime/wait_queue.hpp"
#include "sync/acquire_loop.hpp"

namespace distlock::script {
struct Script;
}

namespace distlock::sync {

// A message on the step's channel that hands it the holding (a fair lock's
// grant): the acquired attempt, and when its lease counts from (the latest
// moment the step knows to be no later than when the server made the grant).
struct Granted {
  Attempt attempt;
  Clock::time_point since;
};

class AcquireStep {
 public:
  virtual ~AcquireStep() = default;

  // The attempt: a script and its KEYS / ARGV, valid while the step lives.
  virtual const script::Script& script() const = 0;
  virtual std::span<const std::string_view> keys() const = 0;
  virtual std::span<const std::string_view> args() const = 0;
  // The key every key of this primitive shares a slot with: what the attempt
  // is routed by.
  virtual std::string_view route_key() const = 0;
  // Reads the attempt's reply (never an error reply: those fail the loop).
  virtual Attempt interpret(const Value& reply) const = 0;
  // The attempt succeeded: `sent` is when it went out (the lease counts from
  // then). I/O thread.
  virtual void acquired(const Attempt& attempt, Clock::time_point sent) = 0;
  // Undoes an attempt that may have run without a reply, in the background
  // and until the server answers. I/O thread.
  virtual void undo() = 0;
  // The channel whose messages wake waiters ("" = only sleep), and how.
  virtual std::string_view channel() const = 0;
  virtual runtime::Wake wake() const { return runtime::Wake::one; }
  // How long to sleep when a contended reply gives no retry-after.
  virtual std::chrono::milliseconds fallback() const = 0;
  // The primitive its acquires count as in the Client's metrics.
  virtual MetricPrimitive metric() const = 0;
  // How long after it was sent an acquired attempt's holding is believed
  // valid (the lease less the drift margin). A reply that comes later made a
  // holding that is already over: it is undone and reported as a timeout,
  // never handed out as a lease that is invalid from the start.
  virtual std::chrono::nanoseconds validity() const { return std::chrono::nanoseconds::max(); }
  // An acquired reply came after validity() had passed. True when the step
  // has undone it itself and the attempt counts as contention (Redlock: a
  // spent validity is a failed attempt, retried within the wait); false
  // (the default) fails the acquire as a reply that never came.
  virtual bool refuse_late() { return false; }

  // Optional hooks (the fair lock uses them; the defaults do nothing).
  // A message on channel() with `payload`, while no attempt is in flight:
  // a Granted when it hands the step the holding without another attempt
  // (then acquired() follows with its `since`); nullopt just retries.
  virtual std::optional<Granted> interpret_message(std::string_view payload) const {
    (void)payload;
    return std::nullopt;
  }
  // An attempt sent at `sent` came back contended. I/O thread.
  virtual void contended(Clock::time_point sent) { (void)sent; }
  // The operation finished (exactly once, before its outcome is delivered):
  // `acquired` false for a timeout, an error or a cancellation. Any attempt
  // sent earlier is ahead of whatever this sends on the same connection.
  virtual void finished(bool acquired) { (void)acquired; }
};

}  // namespace distlock::sync
