#include "sync/acquire_op.hpp"

#include <asio/error.hpp>
#include <asio/post.hpp>
#include <asio/system_executor.hpp>

#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/metrics.hpp"
#include "runtime/waiters.hpp"
#include "sync/services.hpp"
#include "topology/replica_ack.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {

AcquireOp::AcquireOp(Services& client,
                     std::unique_ptr<AcquireStep> step,
                     std::optional<Clock::time_point> deadline,
                     Done done)
    : client_(client),
      step_(std::move(step)),
      loop_(deadline, step_->fallback(), !step_->channel().empty()),
      done_(std::move(done)) {
  policy = step_->wake();
}

void AcquireOp::start() {
  self_ = shared_from_this();
  loop_.start();
  if (auto ec = send()) {
    // Never sent: nothing to undo. Complete off this thread, so async
    // callers are never completed inside their initiating call.
    asio::post(asio::system_executor(), [self = shared_from_this(), ec] {
      self->run(self->loop_.on_reply(Attempt::failed(ec, "the acquire could not be queued"),
                                     Clock::now()));
    });
  }
}

std::error_code AcquireOp::send() {
  sent_ = Clock::now();
  if (attempt_ == 0) started_ = sent_;
  signaled = false;
  ++attempt_;
  held_.reset();
  // Set before the call is queued: its reply may complete on the I/O thread
  // before this thread queues the WAIT.
  const bool wanted = client_.options.min_replicas_acked > 0;
  ack_ = wanted ? Ack::pending : Ack::none;
  const auto ec = client_.topology.call(call_, step_->route_key(), step_->script(), step_->keys(),
                                        step_->args(), this);
  if (!ec && wanted) send_ack_wait();
  return ec;
}

void AcquireOp::send_ack_wait() {
  const topology::ReplicaAck ack{client_.options.min_replicas_acked,
                                 client_.options.replica_ack_timeout};
  const auto ec = topology::send_replica_wait(
      client_.topology, step_->route_key(), ack,
      [self = shared_from_this(), n = attempt_](std::error_code e, std::int64_t acked) {
        self->acked(n, e, acked);
      });
  if (ec) {
    // Not queued (closing, queue full): reported on the I/O thread, where
    // the attempt's reply is handled, as an acknowledgement that failed.
    asio::post(client_.executor.io(),
               [self = shared_from_this(), n = attempt_, ec] { self->acked(n, ec, -1); });
  }
}

void AcquireOp::acked(std::uint64_t attempt, std::error_code ec, std::int64_t acked) {
  if (attempt != attempt_) return;  // an earlier attempt's, no longer wanted
  if (!held_) {
    // Before the attempt's own reply: the script was re-sent after NOSCRIPT
    // behind this WAIT, which so counted nothing of it.
    // (Or the attempt did not acquire, and no acknowledgement is needed.)
    if (ack_ == Ack::pending) ack_ = Ack::arrived_early;
    return;
  }
  ack_ = Ack::none;
  Attempt attempt_reply = std::move(*held_);
  held_.reset();
  const topology::ReplicaAck ack{client_.options.min_replicas_acked,
                                 client_.options.replica_ack_timeout};
  if (ec || acked < ack.replicas) {
    // Like an attempt without a reply: undone by the step, never re-sent.
    attempt_reply = Attempt::no_reply(
        errc::replication_failed,
        topology::replica_shortfall(ack, ec, acked,
                                    "the acquire of '" + std::string(step_->route_key()) + "'") +
            "; it is undone");
  }
  settle(std::move(attempt_reply), Clock::now());
}

void AcquireOp::run(AcquireLoop::Actions a) {
  auto keep = shared_from_this();
  if (a.undo) step_->undo();
  if (a.leave) client_.waiters.remove(std::string(step_->channel()), this, a.pass_signal);
  if (a.cancel_sleep && timer_) timer_->cancel();
  if (a.send) {
    if (auto ec = send()) {
      return run(
          loop_.on_reply(Attempt::failed(ec, "the acquire could not be queued"), Clock::now()));
    }
  }
  if (a.subscribe) {
    // May wake (the channel is confirmed) or fail (closing) at once.
    client_.waiters.add(std::string(step_->channel()), step_->route_key(), shared_from_this());
    return run(loop_.subscribed(Clock::now()));
  }
  if (a.sleep_until) {
    if (!timer_) timer_.emplace(client_.executor.io());
    timer_->expires_at(*a.sleep_until);
    timer_->async_wait([self = shared_from_this()](std::error_code ec) {
      if (!ec) self->run(self->loop_.on_timer());
    });
  }
  if (a.done) {
    step_->finished(a.done->acquired);
    record(*a.done);
    auto done = std::move(done_);
    // The connection still points at call_ while an attempt is in flight.
    if (!loop_.in_flight()) self_.reset();
    done(std::move(*a.done));
  }
}

void AcquireOp::complete(std::error_code ec, Value reply) {
  const auto now = Clock::now();
  const std::string name(step_->route_key());
  Attempt attempt;
  if (ec == errc::timeout || ec == errc::connection_lost) {
    attempt = Attempt::no_reply(ec, "no reply to the acquire of '" + name + "'");
  } else if (ec) {
    attempt = Attempt::failed(ec, "the acquire of '" + name + "' failed");
  } else if (reply.is_error()) {
    attempt = Attempt::failed(errc::server_error,
                              "acquire of '" + name + "' failed: " + reply.as_string());
  } else {
    attempt = step_->interpret(reply);
    const bool late = attempt.kind == Attempt::Kind::acquired && now - sent_ >= step_->validity();
    if (late && step_->refuse_late()) {
      attempt = Attempt::contended(std::nullopt);
    } else if (late) {
      // Answered after the lease it grants had run out (a stalled server or
      // a lease shorter than the round trip): the holding is already over,
      // and the server may have given the lock to another since. Undo it
      // like an attempt without a reply rather than hand out a dead lease.
      attempt = Attempt::no_reply(errc::timeout, "the acquire of '" + name +
                                                     "' was answered after its lease had "
                                                     "run out; it is undone");
    }
  }
  if (attempt.kind == Attempt::Kind::acquired && !loop_.finished() && ack_ != Ack::none) {
    held_ = std::move(attempt);
    if (ack_ == Ack::arrived_early) {
      ack_ = Ack::pending;
      send_ack_wait();
    }
    return;  // settled when the acknowledgement comes
  }
  settle(std::move(attempt), now);
}

void AcquireOp::settle(Attempt attempt, Clock::time_point now) {
  // run() may complete the op and drop its last owner; this reads loop_
  // after it (ASan found the use after free).
  auto keep = shared_from_this();
  const auto name = step_->route_key();
  if (attempt.kind == Attempt::Kind::acquired && now - sent_ >= step_->validity()) {
    attempt = Attempt::no_reply(errc::timeout, "the acquire of '" + std::string(name) +
                                                   "' was acknowledged after its lease had "
                                                   "run out; it is undone");
  }
  const bool was_finished = loop_.finished();
  if (attempt.kind == Attempt::Kind::acquired && !was_finished) step_->acquired(attempt, sent_);
  if (attempt.kind == Attempt::Kind::contended && !was_finished) step_->contended(sent_);
  run(loop_.on_reply(attempt, now));
  if (attempt.kind == Attempt::Kind::contended && !loop_.finished()) waited_ = true;
  // Finished before this reply came: the op may go now.
  if (was_finished) self_.reset();
}

void AcquireOp::record(const AcquireOutcome& o) const noexcept {
  auto result = AcquireResult::failed;
  if (o.acquired) {
    result = AcquireResult::acquired;
  } else if (!o.ec) {
    result = AcquireResult::not_acquired;
  } else if (o.ec == errc::cancelled || o.ec == asio::error::operation_aborted) {
    result = AcquireResult::cancelled;
  }
  client_.metrics.acquire(step_->metric(), result, waited_, started_);
}

void AcquireOp::wake() {
  run(loop_.on_wake(signaled));
}

void AcquireOp::message(std::string_view payload) {
  if (!loop_.in_flight() && !loop_.finished()) {
    auto granted = step_->interpret_message(payload);
    // A grant whose lease may already be over is not believed: the retry
    // below reads the server's state instead.
    if (granted && Clock::now() - granted->since < step_->validity()) {
      step_->acquired(granted->attempt, granted->since);
      return run(loop_.on_granted(granted->attempt));
    }
  }
  wake();
}

void AcquireOp::fail(std::error_code ec, std::string message) {
  run(loop_.on_abort(ec, std::move(message)));
}

void AcquireOp::abort(std::error_code ec) {
  asio::post(client_.executor.io(), [self = shared_from_this(), ec] {
    self->run(self->loop_.on_abort(ec, "the acquire was cancelled"));
  });
}

}  // namespace distlock::sync
