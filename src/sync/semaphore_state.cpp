#include "sync/semaphore_state.hpp"

#include <algorithm>

#include "distlock/error.hpp"
#include "net/completion.hpp"
#include "runtime/executor.hpp"
#include "runtime/identity.hpp"
#include "runtime/metrics_long_hold.hpp"
#include "runtime/watchdog.hpp"
#include "script/scripts.hpp"
#include "sync/acquire_op.hpp"
#include "sync/key_layout.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {
namespace {

constexpr std::size_t kMaxName = 64 * 1024;

std::string checked(std::string name) {
  if (name.empty()) throw Error(errc::invalid_argument, "semaphore name is empty");
  if (name.size() > kMaxName) {
    throw Error(errc::invalid_argument, "semaphore name is " + std::to_string(name.size()) +
                                            " bytes; at most 65536 are allowed");
  }
  return name;
}

// One script call on the semaphore's keys, blocking.
Value script_call(Services& client,
                  const script::Script& script,
                  const SemaphoreKeys& keys,
                  std::span<const std::string_view> args,
                  std::error_code& ec) {
  ec.clear();
  if (!client.executor.may_block(ec)) return {};
  const auto k = keys.keys();
  net::SyncCompletion done;
  std::optional<script::ScriptCall> call;
  if ((ec = client.topology.call(call, keys.name, script, k, args, &done))) return {};
  Value reply = done.wait(ec);
  if (ec) return {};
  if (reply.is_error()) {
    ec = errc::server_error;
    return {};
  }
  if (!reply.is_integer()) {
    ec = errc::protocol_error;
    return {};
  }
  return reply;
}

// A release nobody waits for: owns its arguments and deletes itself.
class BackgroundRelease final : public net::Completion {
 public:
  BackgroundRelease(std::shared_ptr<PermitHolding> h, std::int64_t n)
      : holding_(std::move(h)), n_(std::to_string(n)) {
    keys_ = holding_->keys->keys();
    args_ = {holding_->owner, n_, n == 0 ? "1" : "0", holding_->keys->channel};
  }
  void start() {
    Services& client = *holding_->services;
    if (client.topology.call(call_, holding_->keys->name, script::scripts().semaphore_release,
                             keys_, args_, this)) {
      delete this;  // not queued: the lease ends on the server by itself
    }
  }
  void complete(std::error_code, Value) override { delete this; }

 private:
  std::shared_ptr<PermitHolding> holding_;
  std::string n_;
  std::array<std::string_view, 3> keys_;
  std::array<std::string_view, 4> args_;
  std::optional<script::ScriptCall> call_;
};

}  // namespace

SemaphoreKeys::SemaphoreKeys(std::string n)
    : name(checked(std::move(n))),
      leases(semaphore_leases_key(name)),
      holders(semaphore_holders_key(name)),
      channel(semaphore_channel(name)) {}

PermitHolding::PermitHolding(std::shared_ptr<Services> s,
                             std::shared_ptr<const SemaphoreKeys> k,
                             std::optional<std::chrono::milliseconds> lease)
    : PermitHolding(std::move(s), std::move(k), lease, runtime::random_token()) {}

PermitHolding::PermitHolding(std::shared_ptr<Services> s,
                             std::shared_ptr<const SemaphoreKeys> k,
                             std::optional<std::chrono::milliseconds> lease,
                             std::string holder)
    : runtime::LeaseState(
          k->name,
          holder,
          lease.value_or(s->options.watchdog_timeout),
          !lease.has_value(),
          runtime::Renewal{runtime::Renewal::Kind::permit_holder, k->leases, holder, {}},
          s->options.clock_drift_factor,
          &s->options.on_lease_lost),
      services(std::move(s)),
      keys(std::move(k)) {}

// --- SemaphoreStep -----------------------------------------------------------------

SemaphoreStep::SemaphoreStep(std::shared_ptr<PermitHolding> h, std::int64_t n, bool undo_releases)
    : holding_(std::move(h)), n_(std::to_string(n)), undo_releases_(undo_releases) {
  keys_ = holding_->keys->keys();
  args_ = {holding_->owner, n_, holding_->ttl_text, holding_->keys->channel};
}

const script::Script& SemaphoreStep::script() const {
  return script::scripts().semaphore_acquire;
}

Attempt SemaphoreStep::interpret(const Value& reply) const {
  if (reply.is_nil()) return Attempt::acquired(std::nullopt);
  if (reply.is_integer()) {
    const auto wait = reply.as_integer();
    if (wait < 0) return Attempt::contended(std::nullopt);
    // The earliest lease could end then (a crashed holder's): look again,
    // but at least every fallback() (a release's message may serve another
    // waiter first).
    return Attempt::contended(std::min(std::chrono::milliseconds(wait + 1), fallback()));
  }
  return Attempt::failed(errc::protocol_error, "unexpected semaphore reply " + reply.to_string());
}

void SemaphoreStep::acquired(const Attempt&, Clock::time_point sent) {
  // A Permit's holding (undo_releases_) is one hold; the Client's shared
  // permit count is not timed.
  if (undo_releases_ && !holding_->active.load()) {
    runtime::start_hold(holding_->services->metrics, holding_->services->long_holds, holding_,
                        metric(), sent);
  }
  holding_->confirm(sent);
  holding_->active = true;
  holding_->services->watchdog.activated(*holding_);
}

void SemaphoreStep::undo() {
  uncertain_ = true;
  // A Permit's holder is its own: retiring it gives back exactly what the
  // attempt may have taken. The Client's shared holder cannot tell, so its
  // owner retires it when it holds nothing (semaphore.cpp).
  if (undo_releases_) release_in_background(*holding_->services, holding_);
}

std::chrono::milliseconds SemaphoreStep::fallback() const {
  return std::chrono::milliseconds(holding_->ttl.count() / 3 + 1);
}

// --- blocking calls -----------------------------------------------------------------

bool acquire_permits(Services& client,
                     const std::shared_ptr<PermitHolding>& holding,
                     std::int64_t n,
                     std::optional<Clock::time_point> deadline,
                     bool undo_releases,
                     bool& uncertain,
                     std::error_code& ec) {
  ec.clear();
  if (!client.executor.may_block(ec)) return false;
  AcquireOutcome result;
  net::Event done;
  auto step = std::make_unique<SemaphoreStep>(holding, n, undo_releases);
  SemaphoreStep& s = *step;
  auto op = std::make_shared<AcquireOp>(client, std::move(step), deadline, [&](AcquireOutcome o) {
    result = std::move(o);
    done.set();
  });
  op->start();
  done.wait();
  uncertain = s.uncertain();
  ec = result.ec;
  return result.acquired;
}

std::int64_t release_permits(Services& client,
                             const PermitHolding& holding,
                             std::int64_t n,
                             bool retire,
                             std::error_code& ec) {
  const std::string count = std::to_string(n);
  const std::string_view args[] = {holding.owner, count, retire ? "1" : "0", holding.keys->channel};
  const Value v = script_call(client, script::scripts().semaphore_release, *holding.keys, args, ec);
  return ec ? 0 : v.as_integer();
}

void release_in_background(Services&, std::shared_ptr<PermitHolding> holding, std::int64_t n) {
  (new BackgroundRelease(std::move(holding), n))->start();
}

std::int64_t semaphore_admin(Services& client,
                             const SemaphoreKeys& keys,
                             std::string_view op,
                             std::int64_t value,
                             std::error_code& ec) {
  const std::string v = std::to_string(value);
  const std::string_view args[] = {op, v, keys.channel};
  const Value r = script_call(client, script::scripts().semaphore_admin, keys, args, ec);
  return ec ? 0 : r.as_integer();
}

}  // namespace distlock::sync
