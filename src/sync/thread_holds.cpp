#include "sync/thread_holds.hpp"

#include <unordered_map>

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/identity.hpp"
#include "runtime/watchdog.hpp"
#include "sync/arguments.hpp"
#include "sync/lock_ops.hpp"
#include "sync/primitive.hpp"
#include "sync/services.hpp"

namespace distlock::sync {
namespace {

// A thread's holding of one primitive: its lease and local hold count.
struct ThreadHold {
  std::shared_ptr<Holding> state;
  std::uint32_t count = 0;
  // A release of this holding (a timed-out or dropped unlock, or the undo of
  // an acquire that got no reply) that the server has not confirmed yet. The
  // thread's next lock or unlock of the name settles it first. `count` is
  // what the server holds once it is settled.
  std::shared_ptr<PendingRelease> pending;
};

// This thread's holds, keyed by client id, kind and name, so two kinds of
// hold on one name (a read and a write hold) never collide. Only the owning
// thread ever reads or writes them (another thread's unlock finds nothing and
// reports not_owner), so no lock is needed.
std::unordered_map<std::string, ThreadHold>& thread_holds() {
  thread_local std::unordered_map<std::string, ThreadHold> holds;
  return holds;
}

std::string hold_key(const Services& client, std::string_view kind, const std::string& name) {
  std::string key = client.client_id;
  key += '\n';
  key += kind;
  key += '\n';
  key += name;
  return key;
}

std::string hold_key(const Services& client, const Primitive& p) {
  return hold_key(client, p.kind(), p.name());
}

// The thread's last hold is given up: the watchdog stops renewing it now.
void release_locally(Services& client, Holding& state) {
  state.released = true;
  client.watchdog.remove(&state);
}

// Waits, at most until `until`, for the hold's pending release to settle and
// applies its outcome: a hold the thread still counts that the server no
// longer has is lost. False when it is still unsettled then. `reported` is
// what the unlock that started it reports.
bool settle_pending(ThreadHold& hold, Clock::time_point until, std::error_code& reported) {
  const auto outcome = hold.pending->wait_until(until);
  if (!outcome) return false;
  reported = hold.pending->reported(*outcome);
  if (hold.count > 0 && !outcome->ec && outcome->result == ReleaseResult::not_held) {
    hold.state->mark_lost(LeaseLostEvent::Reason::taken);
  }
  hold.pending.reset();
  return true;
}

AcquireOutcome refuse(std::string message) {
  return {make_error_code(errc::invalid_argument), std::move(message), false, {}};
}

}  // namespace

AcquireOutcome acquire_for_thread(const std::shared_ptr<Services>& client,
                                  const std::shared_ptr<const Primitive>& primitive,
                                  std::optional<milliseconds> wait,
                                  std::optional<milliseconds> lease) {
  const Primitive& p = *primitive;
  const auto deadline = deadline_after(wait);
  const std::string key = hold_key(*client, p);
  auto& holds = thread_holds();
  if (auto it = holds.find(key); it != holds.end() && it->second.pending) {
    // Never re-enter a hold whose count on the server is unknown: that would
    // reuse its fencing token and leave the counts apart.
    const auto limit = Clock::now() + client->options.command_timeout;
    const bool user_first = deadline && *deadline < limit;
    std::error_code ignored;
    if (!settle_pending(it->second, user_first ? *deadline : limit, ignored)) {
      if (user_first) return {{}, {}, false, {}};  // still held by our own unconfirmed release
      return {errc::timeout,
              "the earlier release of '" + p.name() + "' is not confirmed by the server yet",
              false,
              {}};
    }
    if (it->second.count == 0) holds.erase(it);
  }
  std::shared_ptr<Holding> state;
  std::uint32_t count = 0;
  if (auto it = holds.find(key); it != holds.end()) {
    state = it->second.state;
    count = it->second.count;
  }
  if (count > 0 && !p.reentrant()) {
    // Waiting for itself would never end; a try simply does not get it.
    if (!wait) {
      return refuse("this thread already holds '" + p.name() +
                    "', which is not reentrant: lock() would wait for itself forever");
    }
    return {{}, {}, false, {}};
  }
  if (const auto over = p.refused_over(); count == 0 && !over.empty()) {
    auto it = holds.find(hold_key(*client, over, p.name()));
    if (it != holds.end() && it->second.count > 0) {
      return refuse("this thread holds '" + p.name() + "' as " + std::string(over) +
                    " only; taking it as " + std::string(p.kind()) +
                    " on top would wait for itself forever (unlock the " + std::string(over) +
                    " hold first)");
    }
  }
  if (state && state->lost()) {
    return {errc::lease_lost,
            "this thread's earlier hold of '" + p.name() +
                "' was lost; unlock it as many times as it was locked before locking again",
            false,
            {}};
  }
  if (!state || count == 0) {
    state = std::make_shared<Holding>(client, primitive,
                                      p.owner_for(runtime::thread_owner(client->client_id)), lease);
  }
  std::shared_ptr<PendingRelease> cleanup;
  auto outcome = acquire_blocking(*client, state, count + 1, deadline, &cleanup);
  if (outcome.acquired) {
    auto& hold = holds[key];
    hold.state = state;
    hold.count = count + 1;
  } else if (cleanup) {
    // The attempt may have run: the next lock or unlock waits for its undo.
    auto& hold = holds[key];
    hold.state = state;
    hold.count = count;
    hold.pending = std::move(cleanup);
  }
  return outcome;
}

std::error_code unlock_for_thread(Services& client, const Primitive& primitive) noexcept {
  std::error_code ec;
  if (!client.executor.may_block(ec)) return ec;
  auto& holds = thread_holds();
  auto it = holds.find(hold_key(client, primitive));
  if (it == holds.end()) return errc::not_owner;
  ThreadHold& hold = it->second;
  if (hold.pending) {
    const bool repeat = hold.count == 0 && hold.pending->counted_unlock();
    std::error_code reported;
    const bool settled =
        settle_pending(hold, Clock::now() + client.options.command_timeout, reported);
    if (hold.count == 0) {
      if (!settled) return repeat ? errc::timeout : errc::not_owner;
      holds.erase(it);
      // Called again after an unlock that timed out: how that one ended.
      return repeat ? reported : make_error_code(errc::not_owner);
    }
    if (!settled) {
      // Still unknown: this unlock counts all the same, and its release
      // follows the pending one in the background.
      const std::uint32_t expected = hold.count;
      const bool valid_before = hold.state->valid();
      if (--hold.count == 0) release_locally(client, *hold.state);
      hold.pending =
          PendingRelease::start_after(hold.pending, client, hold.state, expected, valid_before);
      return errc::timeout;
    }
  }
  std::shared_ptr<Holding> state = hold.state;
  const std::uint32_t expected = hold.count;
  const bool valid_before = state->valid();
  // The local count moves on at once; a release the server has not
  // confirmed stays pending on the hold until it settles.
  if (--hold.count == 0) release_locally(client, *state);
  const auto result = release_blocking(client, *state, expected, ec);
  std::shared_ptr<PendingRelease> pending;
  ec = finish_release(client, state, expected, valid_before, result, ec, &pending);
  if (pending) {
    hold.pending = std::move(pending);
  } else if (hold.count == 0) {
    holds.erase(it);
  }
  return ec;
}

std::shared_ptr<Holding> thread_holding(const Services& client, const Primitive& primitive) {
  auto it = thread_holds().find(hold_key(client, primitive));
  // A hold counted down to zero may linger while its release settles.
  return it == thread_holds().end() || it->second.count == 0 ? nullptr : it->second.state;
}

std::uint32_t thread_count(const Services& client, const Primitive& primitive) {
  auto it = thread_holds().find(hold_key(client, primitive));
  return it == thread_holds().end() ? 0 : it->second.count;
}

std::optional<Lease> acquire_lease(const std::shared_ptr<Services>& client,
                                   const std::shared_ptr<const Primitive>& primitive,
                                   std::optional<milliseconds> wait,
                                   std::optional<milliseconds> lease,
                                   std::error_code& ec,
                                   std::string& message) {
  auto state = std::make_shared<Holding>(
      client, primitive, primitive->owner_for(client->client_id + ":" + runtime::random_token()),
      lease);
  auto o = acquire_blocking(*client, state, 1, deadline_after(wait));
  ec = o.ec;
  message = std::move(o.message);
  if (!o.acquired) return std::nullopt;
  return detail::Access::lease(std::move(state));
}

}  // namespace distlock::sync
