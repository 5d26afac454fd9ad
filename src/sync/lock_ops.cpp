#include "sync/lock_ops.hpp"

#include <asio/post.hpp>

#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/watchdog.hpp"
#include "sync/acquire_op.hpp"
#include "sync/holding_step.hpp"

namespace distlock::sync {
ReleaseCall::ReleaseCall(const Holding& state, std::uint32_t expected, net::Completion* next)
    : state_(state), expected_(std::to_string(expected)), next_(next) {
  state.primitive->release_args(state, expected_, args_);
}

std::error_code ReleaseCall::start(topology::Topology& topology) {
  const Primitive& p = *state_.primitive;
  return topology.call(call_, p.route_key(), p.release_script(), args_.key_span(), args_.arg_span(),
                       this);
}

void ReleaseCall::complete(std::error_code ec, Value reply) {
  next_->complete(ec, std::move(reply));
}

ReleaseResult release_result(const Value& reply, std::error_code& ec) {
  if (reply.is_error()) {
    ec = errc::server_error;
    return ReleaseResult::not_held;
  }
  if (!reply.is_integer()) {
    ec = errc::protocol_error;
    return ReleaseResult::not_held;
  }
  switch (reply.as_integer()) {
    case 0:
      return ReleaseResult::decremented;
    case 1:
      return ReleaseResult::released;
    case 2:
      return ReleaseResult::mismatch;
    default:
      return ReleaseResult::not_held;
  }
}

AcquireOutcome acquire_blocking(Services& client,
                                const std::shared_ptr<Holding>& state,
                                std::uint32_t count_after,
                                std::optional<Clock::time_point> deadline,
                                std::shared_ptr<PendingRelease>* cleanup) {
  AcquireOutcome result;
  if (!client.executor.may_block(result.ec)) {
    result.message = result.ec == errc::closed ? "the client is closed"
                                               : "a blocking lock call on the client's I/O thread "
                                                 "would deadlock; use async_acquire there";
    return result;
  }
  const bool fresh = !state->active.load();
  if (fresh) client.watchdog.add(state);
  net::Event done;
  std::unique_ptr<HoldingStep> step = state->primitive->acquire_step(client, state, count_after);
  HoldingStep& holding_step = *step;
  auto op =
      std::make_shared<AcquireOp>(client, std::move(step), deadline, [&](AcquireOutcome outcome) {
        result = std::move(outcome);
        done.set();
      });
  op->start();
  done.wait();
  if (fresh && !result.acquired) client.watchdog.remove(state.get());
  if (cleanup != nullptr) *cleanup = holding_step.cleanup();
  return result;
}

ReleaseResult release_blocking(Services& client,
                               Holding& state,
                               std::uint32_t expected,
                               std::error_code& ec) {
  ec.clear();
  if (!client.executor.may_block(ec)) return ReleaseResult::not_held;
  net::SyncCompletion done;
  ReleaseCall call(state, expected, &done);
  const auto sent = Clock::now();
  if ((ec = call.start(client.topology))) {
    return ReleaseResult::not_held;
  }
  Value reply = done.wait(ec);
  if (ec) return ReleaseResult::not_held;
  const auto result = release_result(reply, ec);
  // A partial unlock re-armed the lease on the server (as Redisson's does).
  if (result == ReleaseResult::decremented) state.confirm(sent);
  return result;
}

std::error_code finish_release(Services& client,
                               const std::shared_ptr<Holding>& state,
                               std::uint32_t expected,
                               bool valid_before,
                               ReleaseResult result,
                               std::error_code ec,
                               std::shared_ptr<PendingRelease>* pending) {
  if (!ec) {
    // The first attempt: a count mismatch cannot be a repeat of this call.
    if (result == ReleaseResult::not_held || result == ReleaseResult::mismatch) {
      return errc::lease_lost;
    }
    return {};
  }
  if (ec != errc::timeout && ec != errc::connection_lost) return ec;
  auto p = PendingRelease::start(client, state, expected, true, valid_before);
  if (ec == errc::connection_lost) {
    // The connection is back at once in most drops: give the repeat the time
    // one command may take before leaving it to the background.
    if (auto o = p->wait_until(Clock::now() + client.options.command_timeout)) {
      return p->reported(*o);
    }
  }
  if (pending != nullptr) *pending = std::move(p);
  return ec;
}

// --- PendingRelease ------------------------------------------------------------

std::shared_ptr<PendingRelease> PendingRelease::start(Services& client,
                                                      std::shared_ptr<Holding> state,
                                                      std::uint32_t expected,
                                                      bool counted_unlock,
                                                      bool valid_before) {
  auto p = std::make_shared<PendingRelease>(client, std::move(state), expected, counted_unlock,
                                            valid_before);
  if (!client.pending_releases.add(p)) {
    p->settle({ReleaseResult::not_held, make_error_code(errc::closed)});
    return p;
  }
  asio::post(client.executor.io(), [p] { p->send(); });
  return p;
}

std::shared_ptr<PendingRelease> PendingRelease::start_after(
    const std::shared_ptr<PendingRelease>& previous,
    Services& client,
    std::shared_ptr<Holding> state,
    std::uint32_t expected,
    bool valid_before) {
  auto p = std::make_shared<PendingRelease>(client, std::move(state), expected, true, valid_before);
  if (!client.pending_releases.add(p)) {
    p->settle({ReleaseResult::not_held, make_error_code(errc::closed)});
    return p;
  }
  {
    std::lock_guard lock(previous->mutex_);
    if (!previous->outcome_) {
      previous->next_ = p;
      return p;
    }
  }
  asio::post(client.executor.io(), [p] { p->send(); });
  return p;
}

PendingRelease::PendingRelease(Services& client,
                               std::shared_ptr<Holding> state,
                               std::uint32_t expected,
                               bool counted_unlock,
                               bool valid_before)
    : client_(client),
      state_(std::move(state)),
      expected_(expected),
      counted_unlock_(counted_unlock),
      valid_before_(valid_before),
      timer_(client.executor.io()) {}

std::optional<PendingRelease::Outcome> PendingRelease::wait_until(Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  settled_.wait_until(lock, deadline, [&] { return outcome_.has_value(); });
  return outcome_;
}

std::error_code PendingRelease::reported(const Outcome& outcome) const {
  if (outcome.ec) return outcome.ec;
  if (outcome.result != ReleaseResult::not_held) return {};
  // Gone: an earlier send deleted it (a last hold) or it was lost before.
  return expected_ == 1 && valid_before_ ? std::error_code() : make_error_code(errc::lease_lost);
}

void PendingRelease::send() {
  {
    std::lock_guard lock(mutex_);
    if (outcome_) return;
  }
  self_ = shared_from_this();
  auto call = std::make_shared<ReleaseCall>(*state_, expected_, this);
  call_ = call;
  const auto ec = call->start(client_.topology);
  if (ec == errc::closed) return settle({ReleaseResult::not_held, ec});
  if (ec) send_after(std::chrono::milliseconds(10));  // queue_full: try again shortly
}

void PendingRelease::send_after(std::chrono::milliseconds delay) {
  backing_off_ = true;
  timer_.expires_after(delay);
  timer_.async_wait([self = shared_from_this()](std::error_code ec) {
    if (ec || !self->backing_off_) return;
    self->backing_off_ = false;
    self->send();
  });
}

void PendingRelease::kick() {
  failures_ = 0;
  if (!backing_off_) return;  // a send is in flight, or it is settled
  backing_off_ = false;
  timer_.cancel();
  send();
}

void PendingRelease::complete(std::error_code ec, Value reply) {
  if (!ec) {
    std::error_code e;
    const auto result = release_result(reply, e);
    return settle({result, e});
  }
  if (ec == errc::closed) return settle({ReleaseResult::not_held, ec});
  // timeout or connection_lost: unknown again. Send it once more, at once the
  // first time and then backing off, so a server that refuses connections is
  // not asked more than a few times a second. Posted: the call completing
  // now must not be replaced while it is still on the stack.
  const auto delay =
      std::chrono::milliseconds(failures_ == 0 ? 0 : std::min(1000, 10 << failures_));
  if (failures_ < 7) ++failures_;
  send_after(delay);
}

void PendingRelease::close() {
  backing_off_ = false;
  timer_.cancel();
  settle({ReleaseResult::not_held, make_error_code(errc::closed)});
}

void PendingRelease::settle(Outcome outcome) {
  std::shared_ptr<PendingRelease> next;
  {
    std::lock_guard lock(mutex_);
    if (outcome_) return;
    outcome_ = outcome;
    next = std::move(next_);
  }
  settled_.notify_all();
  // The server's count is known again: the release of the next level may go.
  if (next) asio::post(client_.executor.io(), [next] { next->send(); });
  client_.pending_releases.remove(this);
  timer_.cancel();
  // Let go of ourselves only after the call now completing has unwound: it
  // lives in call_.
  if (self_) asio::post(client_.executor.io(), [last = std::move(self_)] {});
}

bool PendingReleases::add(const std::shared_ptr<PendingRelease>& p) {
  std::lock_guard lock(mutex_);
  if (closed_) return false;
  set_.emplace(p.get(), p);
  return true;
}

void PendingReleases::remove(const PendingRelease* p) {
  std::lock_guard lock(mutex_);
  set_.erase(p);
}

void PendingReleases::close() {
  std::unordered_map<const PendingRelease*, std::shared_ptr<PendingRelease>> all;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    all.swap(set_);
  }
  for (const auto& [ptr, p] : all) p->close();
}

void PendingReleases::kick_all() {
  std::vector<std::shared_ptr<PendingRelease>> all;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [ptr, p] : set_) all.push_back(p);
  }
  for (const auto& p : all) p->kick();
}

std::size_t PendingReleases::size() const {
  std::lock_guard lock(mutex_);
  return set_.size();
}

}  // namespace distlock::sync
