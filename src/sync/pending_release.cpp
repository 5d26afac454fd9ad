#include "sync/pending_release.hpp"

#include <algorithm>
#include <asio/post.hpp>
#include <vector>

#include "distlock/error.hpp"
#include "runtime/executor.hpp"

namespace distlock::sync {

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
  sending_ = !ec;
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
  sending_ = false;
  {
    std::lock_guard lock(mutex_);
    if (outcome_) {
      // Settled (closed) while this call was in flight: its completion was
      // the last thing that needed us.
      if (self_) asio::post(client_.executor.io(), [last = std::move(self_)] {});
      return;
    }
  }
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
  // lives in call_. A call still in flight (close() settles before the
  // connections fail their requests) completes into call_ and this later:
  // complete() lets go then.
  if (self_ && !sending_) asio::post(client_.executor.io(), [last = std::move(self_)] {});
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
