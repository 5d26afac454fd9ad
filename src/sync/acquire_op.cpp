#include "sync/acquire_op.hpp"

#include <asio/post.hpp>
#include <asio/system_executor.hpp>

#include "client_impl.hpp"
#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/lock_ops.hpp"

namespace distlock::detail {

AcquireOp::AcquireOp(ClientImpl& client,
                     std::shared_ptr<LeaseState> state,
                     std::uint32_t count_after,
                     std::optional<Clock::time_point> deadline,
                     Done done)
    : client_(client),
      state_(std::move(state)),
      count_after_(count_after),
      deadline_(deadline),
      done_(std::move(done)) {
  keys_[0] = state_->keys->name;
  keys_[1] = state_->keys->fence;
  key_count_ = state_->keys->fence.empty() ? 1 : 2;
  args_ = {state_->ttl_text, state_->owner};
}

void AcquireOp::start() {
  self_ = shared_from_this();
  if (auto ec = attempt()) {
    // Never sent: nothing to clean up. Complete off this thread, so async
    // callers are never completed inside their initiating call.
    asio::post(asio::system_executor(), [self = shared_from_this(), ec] {
      self->finish({ec, "the acquire could not be queued", false, std::nullopt});
    });
  }
}

std::error_code AcquireOp::attempt() {
  sent_ = Clock::now();
  in_flight_ = true;
  retry_ = false;
  signaled = false;
  net::Connection& connection = client_.topology().data_for(state_->keys->name);
  call_.emplace(connection, script::scripts().acquire,
                std::span<const std::string_view>(keys_.data(), key_count_), args_, this);
  auto ec = call_->start();
  if (ec) in_flight_ = false;
  return ec;
}

void AcquireOp::complete(std::error_code ec, Value reply) {
  in_flight_ = false;
  if (finished_) {
    // Aborted while this attempt was in flight; the op may go now.
    auto last = std::move(self_);
    return;
  }
  if (ec) {
    if (ec == errc::timeout || ec == errc::connection_lost) send_cleanup();
    return finish({ec, "no reply to the acquire of '" + state_->keys->name + "'", false, {}});
  }
  if (reply.is_error()) {
    return finish({errc::server_error,
                   "acquire of '" + state_->keys->name + "' failed: " + reply.as_string(),
                   false,
                   {}});
  }
  if (reply.is_nil() || reply.is_array()) {
    std::optional<std::uint64_t> token;
    if (reply.is_array() && !reply.as_array().empty() && reply.as_array()[0].is_integer()) {
      token = static_cast<std::uint64_t>(reply.as_array()[0].as_integer());
    }
    if (!state_->active.load()) state_->fencing_token = token;
    state_->confirm(sent_);
    state_->active = true;
    client_.watchdog().activated(*state_);
    return finish({{}, {}, true, state_->fencing_token ? state_->fencing_token : token});
  }
  if (reply.is_integer()) return contended(reply.as_integer());
  finish({errc::protocol_error, "unexpected acquire reply " + reply.to_string(), false, {}});
}

void AcquireOp::contended(std::int64_t pttl) {
  const auto now = Clock::now();
  if (deadline_ && *deadline_ <= now) return finish({{}, {}, false, {}});
  if (!waiting_) {
    waiting_ = true;
    // Subscribe before the next attempt, so an unlock after it is not missed.
    // add() may wake us at once when the channel is already confirmed.
    client_.waiters().add(state_->keys->channel, shared_from_this());
    if (in_flight_ || finished_) return;
  }
  if (retry_ || signaled) {
    if (auto ec = attempt()) finish({ec, "the acquire could not be queued", false, {}});
    return;
  }
  // Sleep no longer than the holder's TTL: a lost unlock message only delays.
  // A holder without TTL (-1) is re-checked every third of our lease.
  // PTTL 0 means "expires within the millisecond": retry right after it.
  const auto fallback =
      std::chrono::milliseconds(pttl >= 0 ? pttl + 1 : state_->ttl.count() / 3 + 1);
  auto until = now + fallback;
  if (deadline_ && *deadline_ < until) until = *deadline_;
  sleep_until(until);
}

void AcquireOp::sleep_until(Clock::time_point t) {
  if (!timer_) timer_.emplace(client_.io());
  sleeping_ = true;
  timer_->expires_at(t);
  timer_->async_wait([self = shared_from_this()](std::error_code ec) {
    if (ec || !self->sleeping_ || self->finished_) return;
    self->sleeping_ = false;
    if (auto e = self->attempt()) self->finish({e, "the acquire could not be queued", false, {}});
  });
}

void AcquireOp::wake() {
  if (finished_) return;
  if (in_flight_) {
    retry_ = true;
    return;
  }
  if (sleeping_) {
    sleeping_ = false;
    timer_->cancel();
    if (auto ec = attempt()) finish({ec, "the acquire could not be queued", false, {}});
  }
}

void AcquireOp::fail(std::error_code ec, std::string message) {
  finish({ec, std::move(message), false, {}});
}

void AcquireOp::finish(AcquireOutcome outcome) {
  if (finished_) return;
  finished_ = true;
  auto keep = shared_from_this();
  if (waiting_) {
    waiting_ = false;
    client_.waiters().remove(state_->keys->channel, this, !outcome.acquired);
  }
  if (sleeping_) {
    sleeping_ = false;
    timer_->cancel();
  }
  auto done = std::move(done_);
  // The connection still points at call_ while an attempt is in flight.
  if (!in_flight_) self_.reset();
  done(std::move(outcome));
}

void AcquireOp::send_cleanup() {
  // Releasing with the count this acquire would have produced removes exactly
  // the holding it made, and nothing when it did not run (the count differs).
  // It is sent until the server answers: a cleanup lost too would leave a
  // hold the owner does not know of (issue 8).
  cleanup_ = PendingRelease::start(client_, state_, count_after_, false, false);
}

}  // namespace distlock::detail
