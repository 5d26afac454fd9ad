#include "distlock/lock.hpp"

#include <unordered_map>

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/identity.hpp"
#include "runtime/watchdog.hpp"
#include "sync/lock_args.hpp"
#include "sync/lock_ops.hpp"
#include "sync/services.hpp"

namespace distlock {
namespace {

using runtime::Clock;
using std::chrono::milliseconds;
using sync::AcquireOutcome;
using sync::check_lease;
using sync::check_wait;
using sync::deadline_after;
using sync::or_throw;
using sync::throw_outcome;

// A thread's holding of one lock: its lease and local hold count.
struct ThreadHold {
  std::shared_ptr<sync::Holding> state;
  std::uint32_t count = 0;
  // A release of this holding (a timed-out or dropped unlock, or the undo of
  // an acquire that got no reply) that the server has not confirmed yet. The
  // thread's next lock or unlock of the name settles it first. `count` is
  // what the server holds once it is settled.
  std::shared_ptr<sync::PendingRelease> pending;
};

// This thread's holds of thread-owned primitives, keyed by client id, kind
// and name, so two kinds of hold on one name (a read and a write hold, later)
// never collide. Only the owning thread ever reads or writes them (another
// thread's unlock finds nothing and reports not_owner), so no lock is needed.
std::unordered_map<std::string, ThreadHold>& thread_holds() {
  thread_local std::unordered_map<std::string, ThreadHold> holds;
  return holds;
}

constexpr std::string_view kLockKind = "lock";

std::string hold_key(const sync::Services& client, const std::string& name) {
  std::string key = client.client_id;
  key += '\n';
  key += kLockKind;
  key += '\n';
  key += name;
  return key;
}

}  // namespace

Lock::Lock(std::shared_ptr<sync::Services> client, std::string name, bool fenced)
    : client_(std::move(client)),
      keys_(std::make_shared<const sync::LockKeys>(std::move(name), fenced)) {}

const std::string& Lock::name() const noexcept {
  return keys_->name;
}
bool Lock::fenced() const noexcept {
  return !keys_->fence.empty();
}

// The thread's last hold is given up: the watchdog stops renewing it now.
static void release_locally(sync::Services& client, sync::Holding& state) {
  state.released = true;
  client.watchdog.remove(&state);
}

// Waits, at most until `until`, for the hold's pending release to settle and
// applies its outcome: a hold the thread still counts that the server no
// longer has is lost. False when it is still unsettled then. `reported` is
// what the unlock that started it reports.
static bool settle_pending(ThreadHold& hold, Clock::time_point until, std::error_code& reported) {
  const auto outcome = hold.pending->wait_until(until);
  if (!outcome) return false;
  reported = hold.pending->reported(*outcome);
  if (hold.count > 0 && !outcome->ec && outcome->result == sync::ReleaseResult::not_held) {
    hold.state->mark_lost(LeaseLostEvent::Reason::taken);
  }
  hold.pending.reset();
  return true;
}

// Thread-owned acquire: `wait` nullopt waits forever, zero tries once.
static AcquireOutcome acquire_for_thread(const std::shared_ptr<sync::Services>& client,
                                         const std::shared_ptr<const sync::LockKeys>& keys,
                                         std::optional<milliseconds> wait,
                                         std::optional<milliseconds> lease) {
  const auto deadline = deadline_after(wait);
  const std::string key = hold_key(*client, keys->name);
  auto& holds = thread_holds();
  if (auto it = holds.find(key); it != holds.end() && it->second.pending) {
    // Never re-enter a hold whose count on the server is unknown: that would
    // reuse its fencing token and leave the counts apart (issue 8).
    const auto limit = Clock::now() + client->options.command_timeout;
    const bool user_first = deadline && *deadline < limit;
    std::error_code ignored;
    if (!settle_pending(it->second, user_first ? *deadline : limit, ignored)) {
      if (user_first) return {{}, {}, false, {}};  // still held by our own unconfirmed release
      return {errc::timeout,
              "the earlier release of '" + keys->name + "' is not confirmed by the server yet",
              false,
              {}};
    }
    if (it->second.count == 0) holds.erase(it);
  }
  std::shared_ptr<sync::Holding> state;
  std::uint32_t count = 0;
  if (auto it = holds.find(key); it != holds.end()) {
    state = it->second.state;
    count = it->second.count;
  }
  if (state && state->lost()) {
    return {errc::lease_lost,
            "this thread's earlier hold of '" + keys->name +
                "' was lost; unlock it as many times as it was locked before locking again",
            false,
            {}};
  }
  if (!state) {
    state = std::make_shared<sync::Holding>(client, keys, runtime::thread_owner(client->client_id),
                                            lease);
  }
  std::shared_ptr<sync::PendingRelease> cleanup;
  auto outcome = sync::acquire_blocking(*client, state, count + 1, deadline, &cleanup);
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

void Lock::lock() {
  auto o = acquire_for_thread(client_, keys_, std::nullopt, std::nullopt);
  if (o.ec) throw_outcome(o);
}

void Lock::lock(std::error_code& ec) {
  ec = acquire_for_thread(client_, keys_, std::nullopt, std::nullopt).ec;
}

void Lock::lock(milliseconds lease) {
  check_lease(lease);
  auto o = acquire_for_thread(client_, keys_, std::nullopt, lease);
  if (o.ec) throw_outcome(o);
}

void Lock::lock(milliseconds lease, std::error_code& ec) {
  ec.clear();
  if (lease.count() <= 0) {
    ec = errc::invalid_argument;
    return;
  }
  ec = acquire_for_thread(client_, keys_, std::nullopt, lease).ec;
}

bool Lock::try_lock() {
  return try_lock_for_ms(milliseconds(0), std::nullopt);
}

bool Lock::try_lock(std::error_code& ec) {
  return try_lock_for(milliseconds(0), std::nullopt, ec);
}

bool Lock::try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease) {
  check_wait(wait);
  check_lease(lease);
  auto o = acquire_for_thread(client_, keys_, wait, lease);
  if (o.ec) throw_outcome(o);
  return o.acquired;
}

bool Lock::try_lock_for(milliseconds wait, milliseconds lease) {
  return try_lock_for_ms(wait, lease);
}

bool Lock::try_lock_for(milliseconds wait, std::optional<milliseconds> lease, std::error_code& ec) {
  ec.clear();
  if (wait.count() < 0 || (lease && lease->count() <= 0)) {
    ec = errc::invalid_argument;
    return false;
  }
  auto o = acquire_for_thread(client_, keys_, wait, lease);
  ec = o.ec;
  return o.acquired;
}

void Lock::unlock() noexcept {
  std::error_code ignored;
  unlock(ignored);
}

void Lock::unlock(std::error_code& ec) noexcept {
  ec.clear();
  if (!client_->executor.may_block(ec)) return;
  auto& holds = thread_holds();
  auto it = holds.find(hold_key(*client_, keys_->name));
  if (it == holds.end()) {
    ec = errc::not_owner;
    return;
  }
  ThreadHold& hold = it->second;
  if (hold.pending) {
    const bool repeat = hold.count == 0 && hold.pending->counted_unlock();
    std::error_code reported;
    const bool settled =
        settle_pending(hold, Clock::now() + client_->options.command_timeout, reported);
    if (hold.count == 0) {
      if (!settled) {
        ec = repeat ? errc::timeout : errc::not_owner;
        return;
      }
      holds.erase(it);
      // Called again after an unlock that timed out: how that one ended.
      ec = repeat ? reported : make_error_code(errc::not_owner);
      return;
    }
    if (!settled) {
      // Still unknown: this unlock counts all the same, and its release
      // follows the pending one in the background.
      const std::uint32_t expected = hold.count;
      const bool valid_before = hold.state->valid();
      if (--hold.count == 0) release_locally(*client_, *hold.state);
      hold.pending = sync::PendingRelease::start_after(hold.pending, *client_, hold.state, expected,
                                                       valid_before);
      ec = errc::timeout;
      return;
    }
  }
  std::shared_ptr<sync::Holding> state = hold.state;
  const std::uint32_t expected = hold.count;
  const bool valid_before = state->valid();
  // The local count moves on at once; a release the server has not
  // confirmed stays pending on the hold until it settles.
  if (--hold.count == 0) release_locally(*client_, *state);
  const auto result = sync::release_blocking(*client_, *state, expected, ec);
  std::shared_ptr<sync::PendingRelease> pending;
  ec = sync::finish_release(*client_, state, expected, valid_before, result, ec, &pending);
  if (pending) {
    hold.pending = std::move(pending);
  } else if (hold.count == 0) {
    holds.erase(it);
  }
}

// force_release.lua; true when it deleted a lock. On failure sets ec and
// `what` (the server's text for an error reply).
static std::shared_ptr<sync::Holding> thread_state(sync::Services& client,
                                                   const std::string& name) {
  auto it = thread_holds().find(hold_key(client, name));
  // A hold counted down to zero may linger while its release settles.
  return it == thread_holds().end() || it->second.count == 0 ? nullptr : it->second.state;
}

std::optional<std::uint64_t> Lock::fencing_token() const {
  auto s = thread_state(*client_, keys_->name);
  return s ? s->fencing_token : std::nullopt;
}

std::stop_token Lock::stop_token() const {
  auto s = thread_state(*client_, keys_->name);
  return s ? s->stop_token() : std::stop_token();
}

std::optional<std::chrono::steady_clock::time_point> Lock::lease_deadline() const {
  auto s = thread_state(*client_, keys_->name);
  if (!s) return std::nullopt;
  return s->deadline();
}

bool Lock::lease_valid() const {
  auto s = thread_state(*client_, keys_->name);
  return s && s->valid();
}

Lock Client::lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return Lock(sync::services_of(impl_), std::move(name), false);
}

Lock Client::fenced_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return Lock(sync::services_of(impl_), std::move(name), true);
}

}  // namespace distlock
