#include "sync/semaphore_client_permits.hpp"

#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/watchdog.hpp"
#include "sync/semaphore_registry.hpp"

namespace distlock::sync {

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

SemaphoreState::SemaphoreState(std::shared_ptr<Services> s, std::shared_ptr<const SemaphoreKeys> k)
    : services(std::move(s)), keys(std::move(k)) {}

std::int64_t SemaphoreState::held() const {
  const std::lock_guard guard(mutex_);
  return held_;
}

std::shared_ptr<PermitHolding> SemaphoreState::episode_locked() {
  if (episode_ && episode_->lost() && pending_ == 0) {
    // The lease ended (the watchdog could not renew it): the server gives
    // those permits back, so the Client holds none of them any more.
    held_ = 0;
    retire_locked(true);
  }
  if (!episode_) {
    // A fresh holder id per episode: a late reply or leftover of an earlier
    // one can never count for this one.
    episode_ = std::make_shared<PermitHolding>(services, keys, std::nullopt);
    services->watchdog.add(episode_);
    self_ = shared_from_this();
    uncertain_ = false;
  }
  return episode_;
}

void SemaphoreState::retire_locked(bool give_back) {
  services->watchdog.remove(episode_.get());
  episode_->released = true;
  // give_back whether or not the holder ever held: an attempt that got no
  // reply, or whose write too few replicas acknowledged, may have taken
  // permits under a holder that was never active.
  if (give_back && !services->executor.closed()) {
    release_in_background(*services, episode_);
  }
  episode_.reset();
  self_.reset();  // last: may destroy this state once the caller lets go
}

bool SemaphoreState::acquire(std::int64_t n,
                             std::optional<Clock::time_point> deadline,
                             std::error_code& ec) {
  ec.clear();
  if (!services->executor.may_block(ec)) return false;
  const auto keep = shared_from_this();
  const std::shared_ptr<PermitHolding> episode = begin_acquire();
  bool uncertain = false;
  const bool acquired = acquire_permits(*services, episode, n, deadline, false, uncertain, ec);
  end_acquire(n, acquired, uncertain);
  return acquired;
}

std::shared_ptr<PermitHolding> SemaphoreState::begin_acquire() {
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

void SemaphoreState::undo_late(const std::shared_ptr<PermitHolding>& holder,
                               std::int64_t n,
                               bool took) {
  const auto keep = shared_from_this();
  const std::lock_guard guard(mutex_);
  // Closed: nothing renews the holder any more; its lease ends on the server.
  if (services->executor.closed()) return;
  if (holder == episode_) {
    // Still the Client's holder (it holds or awaits other permits): give
    // back exactly what the attempt took, or, unknown, retire the holder
    // when the Client holds nothing (as after any unanswered attempt).
    if (took) {
      release_in_background(*services, holder, n);
    } else {
      uncertain_ = true;
    }
    return;
  }
  // Retired since (the Client held nothing else): all the holder holds now
  // is what the attempt took; retiring it again gives that back.
  release_in_background(*services, holder);
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
    // The last permits, nothing else in flight: retire the holder in the
    // same call, giving back anything an unanswered acquire left on it.
    // Under the mutex, so no acquire starts on a holder being retired.
    const auto r = release_permits(*services, *episode_, n, true, ec);
    settle_release(n, r, ec, episode_);
    if (!ec && r >= 1) {
      held_ -= n;
      retire_locked(false);
    }
    return;
  }
  // Others are held or in flight: release without the mutex, so one
  // Client's threads release (and acquire) concurrently. The permits are
  // counted out first; a release that changed nothing counts them back.
  const std::shared_ptr<PermitHolding> episode = episode_;
  held_ -= n;
  ++releasing_;
  guard.unlock();
  const auto r = release_permits(*services, *episode, n, false, ec);
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

void SemaphoreState::settle_release(std::int64_t n,
                                    std::int64_t r,
                                    std::error_code& ec,
                                    const std::shared_ptr<PermitHolding>& episode) {
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
