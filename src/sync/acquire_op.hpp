// One acquire of any primitive, waiting if asked: the I/O around the shared
// AcquireLoop and a primitive's AcquireStep. Runs on the I/O thread after the
// first attempt is sent.
#pragma once

#include <asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "net/completion.hpp"
#include "runtime/wait_queue.hpp"
#include "script/script.hpp"
#include "sync/acquire_loop.hpp"
#include "sync/acquire_step.hpp"

namespace distlock::sync {

struct Services;

// Attempt -> (contended) subscribe to the step's channel -> retry on each
// wake-up or when the retry-after runs out -> until acquired, the deadline
// passes, or an error. On success the step has confirmed the holding before
// `done` runs.
//
// An attempt that may have reached the server without a reply (timeout,
// connection lost) is never re-sent: the op fails, and the step undoes it.
class AcquireOp final : public net::Completion,
                        public runtime::Waiter,
                        public std::enable_shared_from_this<AcquireOp> {
 public:
  using Done = std::function<void(AcquireOutcome)>;

  // `deadline`: nullopt waits as long as it takes; a time in the past makes
  // exactly one attempt.
  AcquireOp(Services& client,
            std::unique_ptr<AcquireStep> step,
            std::optional<Clock::time_point> deadline,
            Done done);

  // Sends the first attempt; any thread. `done` runs exactly once, on the I/O
  // thread, or on the system executor when the first attempt cannot be queued.
  void start();
  // Any thread: ends the wait with `ec` (an attempt in flight is undone if it
  // turns out to have acquired). Nothing when already finished.
  void abort(std::error_code ec);

  AcquireStep& step() noexcept { return *step_; }

  void wake() override;
  // A grant on the step's channel completes the op without another attempt
  // (AcquireStep::interpret_message); any other message wakes it.
  void message(std::string_view payload) override;
  void fail(std::error_code ec, std::string message) override;
  void complete(std::error_code ec, Value reply) override;

 private:
  void run(AcquireLoop::Actions actions);
  std::error_code send();
  // With ClientOptions::min_replicas_acked: WAIT behind the attempt, and the
  // attempt's acquired reply held back until the acknowledgements come.
  void send_ack_wait();
  void acked(std::uint64_t attempt, std::error_code ec, std::int64_t acked);
  // The rest of complete() once a reply (and its acknowledgement) is known.
  void settle(Attempt attempt, Clock::time_point now);
  // Counts the finished op in the Client's metrics.
  void record(const AcquireOutcome& outcome) const noexcept;

  Services& client_;
  std::unique_ptr<AcquireStep> step_;
  AcquireLoop loop_;
  Done done_;
  std::optional<script::ScriptCall> call_;
  Clock::time_point sent_;
  Clock::time_point started_;        // the first attempt's sent_
  bool waited_ = false;              // a contended reply did not end the op
  std::shared_ptr<AcquireOp> self_;  // alive while an attempt or a sleep is pending
  std::optional<asio::steady_timer> timer_;
  // Replica acknowledgement of the attempt in flight (numbered attempt_).
  enum class Ack { none, pending, arrived_early };
  std::uint64_t attempt_ = 0;
  Ack ack_ = Ack::none;
  std::optional<Attempt> held_;  // acquired, waiting for its acknowledgement
};

}  // namespace distlock::sync
