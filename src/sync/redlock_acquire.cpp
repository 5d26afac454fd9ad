// RedlockCore's acquire and release: one fan-out per attempt, counted as the
// answers arrive.
#include <random>

#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/redlock_core.hpp"

namespace distlock::sync {
namespace {

// simple_acquire.lua answers nil when it set the token (anything else: the
// key's PTTL, an error reply, or no reply at all, is a vote against).
bool took(const NodeAnswer& a) {
  return a.answered && !a.ec && a.reply.is_nil();
}

bool server_refused(const NodeAnswer& a) {
  return a.answered && !a.ec && a.reply.is_error();
}

std::chrono::milliseconds jitter(std::chrono::milliseconds bound) {
  if (bound.count() <= 0) return bound;
  // Only spreads retries apart: no secret, so no CSPRNG.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::chrono::milliseconds(
      std::uniform_int_distribution<std::int64_t>(0, bound.count())(rng));
}

}  // namespace

RedlockOutcome RedlockCore::attempt(const std::string& name,
                                    std::optional<std::chrono::milliseconds> lease) {
  auto holding = std::make_shared<RedlockHolding>(shared_from_this(), name,
                                                  lease.value_or(options.lease), !lease);
  const std::size_t n = size();
  const std::size_t q = quorum();
  // The validity is counted from before the first request leaves.
  const auto sent = RedlockClock::now();
  auto ballot = fan_out(topologies(), script::scripts().simple_acquire, {name},
                        {holding->ttl_text, holding->owner});
  const auto answers = ballot->wait(sent + options.node_timeout, [&](const auto& so_far) {
    std::size_t yes = 0, no = 0;
    for (const auto& a : so_far) {
      if (took(a))
        ++yes;
      else if (a.answered)
        ++no;
    }
    // Stop at a majority, or once one can no longer be reached.
    return yes >= q || no > n - q;
  });
  std::size_t yes = 0, refused = 0;
  std::string first_error;
  std::vector<bool> answered(n);
  for (std::size_t i = 0; i < n; ++i) {
    answered[i] = answers[i].answered;
    if (took(answers[i])) ++yes;
    if (server_refused(answers[i])) {
      if (refused++ == 0) first_error = answers[i].reply.as_string();
    }
  }
  // Validity = lease - elapsed - drift: positive while now is before the
  // LeaseState deadline counted from `sent`.
  if (yes >= q && RedlockClock::now() < sent + holding->believed) {
    holding->renewal_sent(sent);
    holding->confirm(sent);
    holding->hold_record.start(metrics, MetricPrimitive::redlock, sent);
    holding->active = true;
    watch(holding);  // extended, or (a fixed lease) marked lost when it runs out
    return {holding, {}, {}};
  }
  // Undo on every node, including those that voted against or did not
  // answer (their SET may still land); wait only for those that answered.
  release_everywhere(name, holding->owner, answered);
  if (refused >= q) {
    return {nullptr, make_error_code(errc::server_error),
            "RedlockLock '" + name + "': a majority of the nodes refused: " + first_error};
  }
  return {};
}

RedlockOutcome RedlockCore::acquire(const std::string& name,
                                    std::optional<std::chrono::milliseconds> lease,
                                    std::optional<RedlockClock::time_point> deadline) {
  const auto started = std::chrono::steady_clock::now();
  bool waited = false;  // an attempt failed and another followed
  const auto done = [&](RedlockOutcome outcome) {
    const AcquireResult result = outcome.holding ? AcquireResult::acquired
                                 : outcome.ec    ? AcquireResult::failed
                                                 : AcquireResult::not_acquired;
    metrics.acquire(MetricPrimitive::redlock, result, waited, started);
    return outcome;
  };
  const auto closed_outcome = [] {
    return RedlockOutcome{nullptr, make_error_code(errc::closed), "the RedlockGroup is closed"};
  };
  while (true) {
    if (closed()) return done(closed_outcome());
    RedlockOutcome outcome = attempt(name, lease);
    if (outcome.holding || outcome.ec) return done(std::move(outcome));
    if (deadline && RedlockClock::now() >= *deadline) return done({});
    waited = true;
    if (!sleep_before_retry(deadline)) return done(closed_outcome());
    if (deadline && RedlockClock::now() >= *deadline) return done({});
  }
}

bool RedlockCore::sleep_before_retry(std::optional<RedlockClock::time_point> deadline) {
  auto until = RedlockClock::now() + options.retry_delay + jitter(options.retry_jitter);
  if (deadline && *deadline < until) until = *deadline;
  std::unique_lock lock(mutex_);
  return !wake_.wait_until(lock, until, [&] { return closed_; });
}

std::vector<NodeAnswer> RedlockCore::release_everywhere(const std::string& name,
                                                        const std::string& token,
                                                        const std::vector<bool>& await) {
  auto ballot = fan_out(topologies(), script::scripts().simple_release, {name},
                        {token, redlock_channel(name), "0"});
  return ballot->wait(RedlockClock::now() + options.node_timeout, [&](const auto& so_far) {
    for (std::size_t i = 0; i < so_far.size(); ++i) {
      if (!so_far[i].answered && (await.empty() || await[i])) return false;
    }
    return true;
  });
}

std::error_code RedlockCore::release(const std::shared_ptr<RedlockHolding>& holding) {
  if (holding->released.exchange(true)) return {};
  holding->hold_record.end();
  unwatch(holding.get());
  const bool lost_before = holding->lost();
  if (closed()) return errc::closed;
  const auto answers = release_everywhere(holding->name, holding->owner, {});
  std::size_t deleted = 0, gone = 0;
  for (const auto& a : answers) {
    if (!a.answered || a.ec || !a.reply.is_integer()) continue;
    if (a.reply.as_integer() == 1) ++deleted;
    if (a.reply.as_integer() == -1) ++gone;
  }
  if (lost_before) return errc::lease_lost;
  if (deleted >= quorum()) return {};
  // So many nodes no longer had the token that a majority cannot have had it.
  if (gone > size() - quorum()) return errc::lease_lost;
  return errc::timeout;
}

}  // namespace distlock::sync
