#include "sync/semaphore_state.hpp"

#include <algorithm>
#include <limits>

#include "distlock/error.hpp"
#include "net/completion.hpp"
#include "runtime/executor.hpp"
#include "runtime/identity.hpp"
#include "runtime/watchdog.hpp"
#include "sync/lock_ops.hpp"
#include "sync/permit_step.hpp"
#include "sync/semaphore_registry.hpp"

namespace distlock::sync {
namespace {

// A step on the Client's shared holder. Its acquires are not timed holds
// (the Client's count is no one holding), and its undo cannot retire the
// holder, which may hold the Client's other permits: an attempt without reply
// is booked by end_acquire (the holder is retired once the Client holds
// nothing), and one that comes back after a cancel by undo_late.
class ClientPermitStep final : public PermitStep {
 public:
  ClientPermitStep(std::shared_ptr<SemaphoreState> owner,
                   std::shared_ptr<Holding> holder,
                   std::int64_t n)
      : PermitStep(*owner->services, *owner->client_permits, std::move(holder), n),
        owner_(std::move(owner)) {}

  Attempt interpret(const Value& reply) const override {
    Attempt a = PermitStep::interpret(reply);
    took_ = a.kind == Attempt::Kind::acquired;
    return a;
  }
  void acquired(const Attempt&, Clock::time_point sent) override {
    state_->confirm(sent);
    state_->active = true;
    client_.watchdog.activated(*state_);
  }
  void undo() override {
    if (!finished_) {
      uncertain_ = true;
      return;
    }
    owner_->undo_late(state_, n_, took_);
  }
  void finished(bool) override { finished_ = true; }

  bool uncertain() const noexcept { return uncertain_; }

 private:
  const std::shared_ptr<SemaphoreState> owner_;
  mutable bool took_ = false;  // the last reply said acquired (I/O thread only)
  bool uncertain_ = false;
  bool finished_ = false;
};

}  // namespace

std::shared_ptr<SemaphoreState> SemaphoreState::of(std::shared_ptr<Services> services,
                                                   std::string name) {
  SemaphoreRegistry& registry = services->semaphores;
  return registry.state(std::move(services), std::move(name));
}

void SemaphoreState::close() noexcept {
  std::shared_ptr<SemaphoreState> self;  // destroyed after the unlock
  const std::lock_guard guard(mutex_);
  if (episode_) {
    // The watchdog has stopped with the Client: the lease ends on the
    // server, which gives the permits back then.
    episode_->released = true;
    episode_.reset();
  }
  held_ = 0;
  self = std::move(self_);
}

SemaphoreState::SemaphoreState(std::shared_ptr<Services> s, std::string name)
    : services(std::move(s)),
      permits(std::make_shared<const PermitPrimitive>(name, PermitPrimitive::Holder::permit)),
      client_permits(std::make_shared<const PermitPrimitive>(std::move(name),
                                                             PermitPrimitive::Holder::client)) {}

std::int64_t SemaphoreState::held() const {
  const std::lock_guard guard(mutex_);
  return held_;
}

std::shared_ptr<Holding> SemaphoreState::episode_locked() {
  if (episode_ && episode_->lost() && pending_ == 0) {
    // The lease ended (the watchdog could not renew it): the server gives
    // those permits back, so the Client holds none of them any more.
    held_ = 0;
    retire_locked(true);
  }
  if (!episode_) {
    // A fresh holder id per episode: a late reply or leftover of an earlier
    // one can never count for this one.
    episode_ =
        std::make_shared<Holding>(services, client_permits, runtime::random_token(), std::nullopt);
    services->watchdog.add(episode_);
    self_ = shared_from_this();
    uncertain_ = false;
  }
  return episode_;
}

void SemaphoreState::retire_locked(bool give_back) {
  retire(episode_, give_back);
  episode_.reset();
  self_.reset();  // last: may destroy this state once the caller lets go
}

void SemaphoreState::retire(const std::shared_ptr<Holding>& holder, bool give_back) {
  services->watchdog.remove(holder.get());
  holder->released = true;
  // give_back whether or not the holder ever held: an attempt that got no
  // reply, or whose write too few replicas acknowledged, may have taken
  // permits under a holder that was never active.
  if (give_back && !services->executor.closed()) {
    PendingRelease::start(*services, holder, 0, false, false);
  }
}

bool SemaphoreState::acquire(std::int64_t n,
                             std::optional<Clock::time_point> deadline,
                             std::error_code& ec) {
  ec.clear();
  if (!services->executor.may_block(ec)) return false;
  AcquireOutcome result;
  net::Event done;
  start_acquire(n, deadline, [&](AcquireOutcome o) {
    result = std::move(o);
    done.set();
  });
  done.wait();
  ec = result.ec;
  return result.acquired;
}

std::shared_ptr<AcquireOp> SemaphoreState::start_acquire(std::int64_t n,
                                                         std::optional<Clock::time_point> deadline,
                                                         AcquireOp::Done done) {
  auto step = std::make_unique<ClientPermitStep>(shared_from_this(), begin_acquire(), n);
  const ClientPermitStep* s = step.get();  // owned by the op, alive while its done runs
  auto op = std::make_shared<AcquireOp>(
      *services, std::move(step), deadline,
      [self = shared_from_this(), n, s, done = std::move(done)](AcquireOutcome o) {
        self->end_acquire(n, o.acquired, s->uncertain());
        done(std::move(o));
      });
  op->start();
  return op;
}

std::shared_ptr<Holding> SemaphoreState::begin_acquire() {
  const std::lock_guard guard(mutex_);
  auto episode = episode_locked();  // before counting this acquire: it checks pending_
  ++pending_;
  return episode;
}

void SemaphoreState::end_acquire(std::int64_t n, bool acquired, bool uncertain) {
  const auto keep = shared_from_this();  // retire_locked may drop the last other owner
  const std::lock_guard guard(mutex_);
  --pending_;
  if (uncertain) uncertain_ = true;
  if (acquired) held_ += n;
  if (held_ == 0 && pending_ == 0 && releasing_ == 0 && episode_) {
    // Nothing held: stop renewing. An attempt without reply may have taken
    // permits under this holder: the retiring release gives them back.
    retire_locked(uncertain_);
  }
}

void SemaphoreState::undo_late(const std::shared_ptr<Holding>& holder, std::int64_t n, bool took) {
  const auto keep = shared_from_this();
  const std::lock_guard guard(mutex_);
  // Closed: nothing renews the holder any more; its lease ends on the server.
  if (services->executor.closed()) return;
  const auto detached = std::ranges::find(detached_, holder, &Detached::holder);
  if (detached != detached_.end()) {
    // Its retiring release is in flight: release_last settles it, giving
    // back in the background what the attempt may have left on it.
    detached->late = true;
    return;
  }
  if (holder == episode_) {
    // Still the Client's holder (it holds or awaits other permits): give
    // back exactly what the attempt took, or, unknown, retire the holder
    // when the Client holds nothing (as after any unanswered attempt).
    if (took && n <= std::numeric_limits<std::uint32_t>::max()) {
      // Sent once: giving back n is not idempotent, and a repeat could give
      // back the Client's other permits. Unanswered, the n stay on the
      // holder until it retires or its lease ends.
      release_detached(holder, static_cast<std::uint32_t>(n));
    } else {
      uncertain_ = true;
    }
    return;
  }
  // Retired since (the Client held nothing else): all the holder holds now
  // is what the attempt took; retiring it again gives that back.
  PendingRelease::start(*services, holder, 0, false, false);
}

void SemaphoreState::release(std::int64_t n, std::error_code& ec) {
  ec.clear();
  const auto keep = shared_from_this();
  if (!services->executor.may_block(ec)) return;  // closed, or on the I/O thread
  std::unique_lock guard(mutex_);
  if (n > held_ || !episode_) {
    ec = errc::not_owner;
    return;
  }
  if (held_ == n && pending_ == 0 && releasing_ == 0) {
    release_last(n, guard, ec);
    return;
  }
  // Others are held or in flight: release without the mutex, so one
  // Client's threads release (and acquire) concurrently. The permits are
  // counted out first; a release that changed nothing counts them back.
  const std::shared_ptr<Holding> episode = episode_;
  held_ -= n;
  ++releasing_;
  guard.unlock();
  const auto r = client_permits->give_back(*services, *episode, n, false, ec);
  guard.lock();
  --releasing_;
  if (episode_ != episode) {
    // Retired meanwhile (its lease was lost, or the Client closed).
    if (!ec && r == -1) ec = errc::lease_lost;
    if (!ec && r == -2) ec = errc::not_owner;
    return;
  }
  if (ec || r < 1) held_ += n;  // settle_release takes what is gone
  settle_release(n, r, ec, episode);
  if (held_ == 0 && pending_ == 0 && releasing_ == 0 && episode_) {
    retire_locked(uncertain_);
  }
}

void SemaphoreState::release_last(std::int64_t n,
                                  std::unique_lock<std::mutex>& guard,
                                  std::error_code& ec) {
  // The last permits, nothing else in flight: retire the holder in the same
  // call, giving back anything an unanswered acquire left on it. The holder
  // is detached first and the call made without the mutex: what runs on the
  // Client's I/O thread takes it (an async acquire started there, undo_late),
  // and that thread delivers this call's reply, so holding it would hang
  // both. An acquire that starts meanwhile gets a fresh holder.
  const std::shared_ptr<Holding> episode = std::move(episode_);
  detached_.push_back({episode, uncertain_, false});
  held_ -= n;
  guard.unlock();
  const auto r = client_permits->give_back(*services, *episode, n, true, ec);
  guard.lock();
  const auto it = std::ranges::find(detached_, episode, &Detached::holder);
  const Detached d = *it;
  detached_.erase(it);
  settle_last_release(n, r, ec, d);
}

void SemaphoreState::settle_last_release(std::int64_t n,
                                         std::int64_t r,
                                         std::error_code& ec,
                                         const Detached& d) {
  const bool unknown = ec == errc::timeout || ec == errc::connection_lost;
  if (!ec && r == -1) ec = errc::lease_lost;  // the server gave them all back
  if ((!ec && r >= 1) || ec == errc::lease_lost || unknown) {
    // Retired (or its lease over): stop renewing it. Unknown, or a late
    // attempt came back meanwhile: retire it again in the background (the
    // retiring release is idempotent) for whatever it may still hold.
    retire(d.holder, unknown || d.late);
    if (!episode_) self_.reset();  // `keep` in release() holds this state
    return;
  }
  // Nothing changed on the server (not_owner, or an error before the script
  // ran): the Client still holds the n on this holder.
  if (!ec && r == -2) ec = errc::not_owner;
  if (!episode_ && !services->executor.closed()) {
    episode_ = d.holder;
    held_ += n;
    uncertain_ = d.uncertain || d.late;  // as when it was detached, or more
    self_ = shared_from_this();          // a holder retired meanwhile may have let go
    return;
  }
  // An acquire started meanwhile on a fresh holder (or the Client closed):
  // two holders cannot be one count, so this one is given back in the
  // background and the caller still sees the error of its release.
  retire(d.holder, true);
}

void SemaphoreState::settle_release(std::int64_t n,
                                    std::int64_t r,
                                    std::error_code& ec,
                                    const std::shared_ptr<Holding>& episode) {
  if (ec) {
    if (ec != errc::timeout && ec != errc::connection_lost) return;  // server_error etc.
    // Unknown outcome: count them released; what the server may still hold
    // goes with the holder's retirement (or its lease) — never kept longer.
    uncertain_ = true;
    held_ -= n;
    if (held_ == 0 && pending_ == 0 && releasing_ == 0 && episode_ == episode) {
      retire_locked(true);
    }
    return;
  }
  if (r == -2) {
    ec = errc::not_owner;
    return;
  }
  if (r == -1) {
    // The lease had ended: the server gave every permit back already.
    ec = errc::lease_lost;
    held_ = 0;
    if (pending_ == 0 && releasing_ == 0 && episode_ == episode) retire_locked(false);
  }
}

}  // namespace distlock::sync
