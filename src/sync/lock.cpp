#include "distlock/lock.hpp"

#include <charconv>
#include <unordered_map>

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/identity.hpp"
#include "runtime/watchdog.hpp"
#include "script/scripts.hpp"
#include "sync/lock_ops.hpp"
#include "sync/services.hpp"

namespace distlock {
namespace {

using runtime::Clock;
using std::chrono::milliseconds;
using sync::AcquireOutcome;

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

void check_lease(std::optional<milliseconds> lease) {
  if (lease && lease->count() <= 0) {
    throw Error(errc::invalid_argument,
                "lease must be positive, got " + std::to_string(lease->count()) + " ms");
  }
}

void check_wait(milliseconds wait) {
  if (wait.count() < 0) {
    throw Error(errc::invalid_argument,
                "wait must not be negative, got " + std::to_string(wait.count()) + " ms");
  }
}

[[noreturn]] void throw_outcome(const AcquireOutcome& o) {
  throw Error(o.ec, o.message.empty() ? std::string("lock failed") : o.message);
}

std::optional<Clock::time_point> deadline_after(std::optional<milliseconds> wait) {
  if (!wait) return std::nullopt;
  return Clock::now() + *wait;
}

// Calls f(ec, what) and throws Error(ec, what) when it fails: how a throwing
// member shares the code of its error_code& twin and keeps the message.
template <class F>
auto or_throw(F f) {
  std::error_code ec;
  std::string what;
  auto result = f(ec, what);
  if (ec) throw Error(ec, what);
  return result;
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
static bool force_release(const sync::Services& client,
                          const sync::LockKeys& lock,
                          std::error_code& ec,
                          std::string& what) {
  const std::string_view keys[] = {lock.name};
  const std::string_view args[] = {lock.channel, "0"};
  ec.clear();
  what = "force_unlock of '" + lock.name + "'";
  if (!client.executor.may_block(ec)) return false;
  net::SyncCompletion done;
  std::optional<script::ScriptCall> call;
  if ((ec = client.topology.call(call, lock.name, script::scripts().force_release, keys, args,
                                 &done))) {
    return false;
  }
  Value reply = done.wait(ec);
  if (ec) return false;
  if (reply.is_error()) {
    ec = errc::server_error;
    what = reply.as_string();
    return false;
  }
  return reply.is_integer() && reply.as_integer() == 1;
}

bool Lock::force_unlock() {
  return or_throw([&](std::error_code& ec, std::string& what) {
    return force_release(*client_, *keys_, ec, what);
  });
}

bool Lock::force_unlock(std::error_code& ec) {
  std::string what;
  return force_release(*client_, *keys_, ec, what);
}

// One query round trip. On failure sets ec and `what` (the server's text for
// an error reply) and returns nil.
static Value query(const sync::Services& client,
                   std::span<const std::string_view> args,
                   std::error_code& ec,
                   std::string& what) {
  ec.clear();
  Value v = client.call(args, ec);
  if (ec) {
    what = v.is_error() ? v.as_string() : std::string(args[0]) + " failed";
    return Value();
  }
  return v;
}

// As query, for a command answering an integer: 0 with ec set on failure,
// protocol_error for a reply of another type.
static std::int64_t query_integer(const sync::Services& client,
                                  std::span<const std::string_view> args,
                                  std::error_code& ec,
                                  std::string& what) {
  const Value v = query(client, args, ec, what);
  if (ec) return 0;
  if (!v.is_integer()) {
    ec = errc::protocol_error;
    what = std::string(args[0]) + ": expected integer reply, got ";
    what.append(to_string(v.type()));
    return 0;
  }
  return v.as_integer();
}

static bool exists(const sync::Services& client,
                   const sync::LockKeys& lock,
                   std::error_code& ec,
                   std::string& what) {
  const std::string_view args[] = {"EXISTS", lock.name};
  return query_integer(client, args, ec, what) == 1;
}

bool Lock::is_locked() const {
  return or_throw(
      [&](std::error_code& ec, std::string& what) { return exists(*client_, *keys_, ec, what); });
}

bool Lock::is_locked(std::error_code& ec) const {
  std::string what;
  return exists(*client_, *keys_, ec, what);
}

static bool held_here(const sync::Services& client,
                      const sync::LockKeys& lock,
                      std::error_code& ec,
                      std::string& what) {
  const std::string owner = runtime::thread_owner(client.client_id);
  const std::string_view args[] = {"HEXISTS", lock.name, owner};
  return query_integer(client, args, ec, what) == 1;
}

bool Lock::is_held_by_current_thread() const {
  return or_throw([&](std::error_code& ec, std::string& what) {
    return held_here(*client_, *keys_, ec, what);
  });
}

bool Lock::is_held_by_current_thread(std::error_code& ec) const {
  std::string what;
  return held_here(*client_, *keys_, ec, what);
}

static std::uint32_t count_here(const sync::Services& client,
                                const sync::LockKeys& lock,
                                std::error_code& ec,
                                std::string& what) {
  const std::string owner = runtime::thread_owner(client.client_id);
  const std::string_view args[] = {"HGET", lock.name, owner};
  const Value v = query(client, args, ec, what);
  if (ec || v.is_nil()) return 0;
  std::uint32_t count = 0;
  const std::string text = v.is_string() ? v.as_string() : std::string();
  const auto [end, parsed] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (parsed != std::errc() || end != text.data() + text.size()) {
    ec = errc::protocol_error;
    what = "HGET: expected a hold count, got " + v.to_string();
    return 0;
  }
  return count;
}

std::uint32_t Lock::hold_count() const {
  return or_throw([&](std::error_code& ec, std::string& what) {
    return count_here(*client_, *keys_, ec, what);
  });
}

std::uint32_t Lock::hold_count(std::error_code& ec) const {
  std::string what;
  return count_here(*client_, *keys_, ec, what);
}

static std::optional<milliseconds> ttl(const sync::Services& client,
                                       const sync::LockKeys& lock,
                                       std::error_code& ec,
                                       std::string& what) {
  const std::string_view args[] = {"PTTL", lock.name};
  const auto ttl = query_integer(client, args, ec, what);
  if (ec || ttl == -2) return std::nullopt;
  if (ttl == -1) return milliseconds::max();
  return milliseconds(ttl);
}

std::optional<milliseconds> Lock::remaining_ttl() const {
  return or_throw(
      [&](std::error_code& ec, std::string& what) { return ttl(*client_, *keys_, ec, what); });
}

std::optional<milliseconds> Lock::remaining_ttl(std::error_code& ec) const {
  std::string what;
  return ttl(*client_, *keys_, ec, what);
}

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

// --- Handle-owned -------------------------------------------------------------

static std::optional<Lease> acquire_lease(const std::shared_ptr<sync::Services>& client,
                                          const std::shared_ptr<const sync::LockKeys>& keys,
                                          std::optional<milliseconds> wait,
                                          std::optional<milliseconds> lease,
                                          std::error_code& ec,
                                          std::string& message) {
  auto state = std::make_shared<sync::Holding>(
      client, keys, client->client_id + ":" + runtime::random_token(), lease);
  auto o = sync::acquire_blocking(*client, state, 1, deadline_after(wait));
  ec = o.ec;
  message = std::move(o.message);
  if (!o.acquired) return std::nullopt;
  return Lease(std::move(state));
}

Lease Lock::acquire() {
  std::error_code ec;
  std::string message;
  auto l = acquire_lease(client_, keys_, std::nullopt, std::nullopt, ec, message);
  if (ec) throw Error(ec, message);
  return std::move(*l);
}

Lease Lock::acquire(std::error_code& ec) {
  std::string message;
  auto l = acquire_lease(client_, keys_, std::nullopt, std::nullopt, ec, message);
  return l ? std::move(*l) : Lease();
}

std::optional<Lease> Lock::try_acquire() {
  return try_acquire_for(milliseconds(0));
}

std::optional<Lease> Lock::try_acquire(std::error_code& ec) {
  return try_acquire_for(milliseconds(0), std::nullopt, ec);
}

std::optional<Lease> Lock::try_acquire_for(milliseconds wait) {
  check_wait(wait);
  std::error_code ec;
  std::string message;
  auto l = acquire_lease(client_, keys_, wait, std::nullopt, ec, message);
  if (ec) throw Error(ec, message);
  return l;
}

std::optional<Lease> Lock::try_acquire_for(milliseconds wait, milliseconds lease) {
  check_wait(wait);
  check_lease(lease);
  std::error_code ec;
  std::string message;
  auto l = acquire_lease(client_, keys_, wait, lease, ec, message);
  if (ec) throw Error(ec, message);
  return l;
}

std::optional<Lease> Lock::try_acquire_for(milliseconds wait,
                                           std::optional<milliseconds> lease,
                                           std::error_code& ec) {
  ec.clear();
  if (wait.count() < 0 || (lease && lease->count() <= 0)) {
    ec = errc::invalid_argument;
    return std::nullopt;
  }
  std::string message;
  return acquire_lease(client_, keys_, wait, lease, ec, message);
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
