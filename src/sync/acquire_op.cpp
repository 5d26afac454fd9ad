#include "sync/acquire_op.hpp"

#include <asio/post.hpp>
#include <asio/system_executor.hpp>

#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/waiters.hpp"
#include "sync/services.hpp"
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
  signaled = false;
  return client_.topology.call(call_, step_->route_key(), step_->script(), step_->keys(),
                               step_->args(), this);
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
    client_.waiters.add(std::string(step_->channel()), shared_from_this());
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
    if (attempt.kind == Attempt::Kind::acquired && now - sent_ >= step_->validity()) {
      // Answered after the lease it grants had run out (a stalled server or
      // a lease shorter than the round trip): the holding is already over,
      // and the server may have given the lock to another since. Undo it
      // like an attempt without a reply rather than hand out a dead lease.
      attempt = Attempt::no_reply(errc::timeout, "the acquire of '" + name +
                                                     "' was answered after its lease had "
                                                     "run out; it is undone");
    }
  }
  const bool was_finished = loop_.finished();
  if (attempt.kind == Attempt::Kind::acquired && !was_finished) step_->acquired(attempt, sent_);
  if (attempt.kind == Attempt::Kind::contended && !was_finished) step_->contended(sent_);
  run(loop_.on_reply(attempt, now));
  // Finished before this reply came: the op may go now.
  if (was_finished) self_.reset();
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
