// RedlockCore's watchdog: one thread per group (started with its first
// watchdog hold) that extends every due hold on all nodes at once, and marks
// a hold lost the moment an extension does not reach a majority within the
// validity, or a fixed lease runs out.
#include "script/scripts.hpp"
#include "sync/redlock_core.hpp"

namespace distlock::sync {
namespace {

// renew.lua answers {1} when the node still had the token (and extended it),
// {0} when it no longer did; anything else says nothing.
int renewed(const NodeAnswer& a) {
  if (!a.answered || a.ec || !a.reply.is_array() || a.reply.as_array().size() != 1) return -1;
  const Value& v = a.reply.as_array()[0];
  return v.is_integer() ? static_cast<int>(v.as_integer()) : -1;
}

}  // namespace

void RedlockCore::watch(const std::shared_ptr<RedlockHolding>& holding) {
  bool closing = false;
  {
    std::lock_guard lock(mutex_);
    closing = closed_;
    if (!closing) {
      watched_.emplace(holding.get(), holding);
      if (!watchdog_.joinable()) {
        // The thread keeps the core alive until close() ends it.
        watchdog_ = std::thread([self = shared_from_this()] { self->watchdog_loop(); });
      }
    }
  }
  if (closing) {
    // Acquired while close() ran: nothing will extend or check it, so it is
    // lost from the start (outside the mutex: the callback may call us).
    holding->mark_lost(LeaseLostEvent::Reason::client_closed);
    return;
  }
  wake_.notify_all();
}

void RedlockCore::unwatch(const RedlockHolding* holding) {
  std::lock_guard lock(mutex_);
  watched_.erase(holding);
}

void RedlockCore::watchdog_loop() {
  std::unique_lock lock(mutex_);
  while (!closed_) {
    const auto now = RedlockClock::now();
    auto next = RedlockClock::time_point::max();
    std::vector<std::shared_ptr<RedlockHolding>> due, expired;
    for (const auto& [key, h] : watched_) {
      if (h->released.load() || h->lost()) continue;
      if (h->deadline() <= now) {
        expired.push_back(h);
        continue;
      }
      next = std::min(next, h->deadline());
      if (!h->watchdog) continue;
      const auto at = h->last_renewal_sent() + h->ttl / 3;
      if (at <= now) {
        due.push_back(h);
      } else {
        next = std::min(next, at);
      }
    }
    if (due.empty() && expired.empty()) {
      wake_.wait_until(lock, next);
      continue;
    }
    lock.unlock();
    for (const auto& h : expired) lose(h, LeaseLostEvent::Reason::expired);
    extend(due);
    lock.lock();
  }
}

void RedlockCore::extend(const std::vector<std::shared_ptr<RedlockHolding>>& due) {
  const std::size_t n = size();
  const std::size_t q = quorum();
  struct Pending {
    std::shared_ptr<RedlockHolding> holding;
    RedlockClock::time_point sent;
    std::shared_ptr<Ballot> ballot;
  };
  // Every due hold's fan-out goes out before any is waited for, so one slow
  // node delays the round by one node_timeout, not one per hold.
  std::vector<Pending> pending;
  for (const auto& h : due) {
    const auto sent = RedlockClock::now();
    h->renewal_sent(sent);
    pending.push_back({h, sent,
                       fan_out(topologies(), script::scripts().renew, {h->name, h->name},
                               {"s", h->owner, h->ttl_text})});
  }
  for (const auto& p : pending) {
    const auto answers = p.ballot->wait(p.sent + options.node_timeout, [&](const auto& so_far) {
      std::size_t yes = 0, no = 0;
      for (const auto& a : so_far) {
        if (renewed(a) == 1)
          ++yes;
        else if (a.answered)
          ++no;
      }
      return yes >= q || no > n - q;
    });
    std::size_t yes = 0, gone = 0;
    for (const auto& a : answers) {
      if (renewed(a) == 1) ++yes;
      if (renewed(a) == 0) ++gone;
    }
    if (p.holding->released.load()) continue;
    if (yes >= q && RedlockClock::now() < p.sent + p.holding->believed) {
      p.holding->confirm(p.sent);
      metrics.renewals(true, 1);
      continue;
    }
    metrics.renewals(false, 1);
    // Below a majority the hold is gone for good as far as Redlock can
    // tell: say so now rather than at the deadline.
    lose(p.holding, gone > n - q ? LeaseLostEvent::Reason::taken : LeaseLostEvent::Reason::expired);
  }
}

void RedlockCore::lose(const std::shared_ptr<RedlockHolding>& holding,
                       LeaseLostEvent::Reason reason) {
  unwatch(holding.get());
  if (holding->released.load() || !holding->mark_lost(reason)) return;
  // What is left of it on a minority would only block others until it
  // expires: delete it (compare-and-delete, so never another holder's key).
  fan_out(topologies(), script::scripts().simple_release, {holding->name},
          {holding->owner, redlock_channel(holding->name), "0"});
}

}  // namespace distlock::sync
