#include "distlock/lock.hpp"

#include "backend/backend.hpp"
#include "backend/lock_engine.hpp"
#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "sync/arguments.hpp"
#include "sync/holding.hpp"
#include "sync/lock_keys.hpp"
#include "sync/services.hpp"
#include "sync/thread_holds.hpp"

namespace distlock {
namespace {

using std::chrono::milliseconds;
using sync::AcquireOutcome;
using sync::check_lease;
using sync::check_wait;
using sync::throw_outcome;

}  // namespace

Lock::Lock(std::shared_ptr<sync::Services> client, std::string name, bool fenced)
    : client_(std::move(client)),
      primitive_(std::make_shared<const sync::LockKeys>(std::move(name), fenced)) {}

Lock::Lock(std::shared_ptr<sync::Services> client, std::shared_ptr<const sync::Primitive> primitive)
    : client_(std::move(client)), primitive_(std::move(primitive)) {}

Lock::Lock(std::shared_ptr<backend::LockEngine> engine) : engine_(std::move(engine)) {}

const std::string& Lock::name() const noexcept {
  return engine_ ? engine_->name() : primitive_->name();
}
bool Lock::fenced() const noexcept {
  return engine_ ? engine_->fenced() : primitive_->fenced();
}

namespace {

// Every thread-owned acquire of a Lock: Redis's shared holds, or the engine
// of another backend.
AcquireOutcome thread_acquire(const std::shared_ptr<sync::Services>& client,
                              const std::shared_ptr<const sync::Primitive>& primitive,
                              const std::shared_ptr<backend::LockEngine>& engine,
                              std::optional<milliseconds> wait,
                              std::optional<milliseconds> lease) {
  if (engine) return engine->lock_for_thread(wait, lease);
  return sync::acquire_for_thread(client, primitive, wait, lease);
}

}  // namespace

void Lock::lock() {
  auto o = thread_acquire(client_, primitive_, engine_, std::nullopt, std::nullopt);
  if (o.ec) throw_outcome(o);
}

void Lock::lock(std::error_code& ec) {
  ec = thread_acquire(client_, primitive_, engine_, std::nullopt, std::nullopt).ec;
}

void Lock::lock(milliseconds lease) {
  check_lease(lease);
  auto o = thread_acquire(client_, primitive_, engine_, std::nullopt, lease);
  if (o.ec) throw_outcome(o);
}

void Lock::lock(milliseconds lease, std::error_code& ec) {
  if (sync::rejected(std::nullopt, lease, ec)) return;
  ec = thread_acquire(client_, primitive_, engine_, std::nullopt, lease).ec;
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
  auto o = thread_acquire(client_, primitive_, engine_, wait, lease);
  if (o.ec) throw_outcome(o);
  return o.acquired;
}

bool Lock::try_lock_for(milliseconds wait, milliseconds lease) {
  return try_lock_for_ms(wait, lease);
}

bool Lock::try_lock_for(milliseconds wait, std::optional<milliseconds> lease, std::error_code& ec) {
  if (sync::rejected(wait, lease, ec)) return false;
  auto o = thread_acquire(client_, primitive_, engine_, wait, lease);
  ec = o.ec;
  return o.acquired;
}

void Lock::unlock() noexcept {
  std::error_code ignored;
  unlock(ignored);
}

void Lock::unlock(std::error_code& ec) noexcept {
  ec = engine_ ? engine_->unlock_for_thread() : sync::unlock_for_thread(*client_, *primitive_);
}

namespace {

std::shared_ptr<runtime::LeaseState> holding_of(
    const std::shared_ptr<sync::Services>& client,
    const std::shared_ptr<const sync::Primitive>& primitive,
    const std::shared_ptr<backend::LockEngine>& engine) {
  if (engine) return engine->thread_holding();
  return sync::thread_holding(*client, *primitive);
}

}  // namespace

std::optional<std::uint64_t> Lock::fencing_token() const {
  auto s = holding_of(client_, primitive_, engine_);
  return s ? s->fencing_token : std::nullopt;
}

std::stop_token Lock::stop_token() const {
  auto s = holding_of(client_, primitive_, engine_);
  return s ? s->stop_token() : std::stop_token();
}

std::optional<std::chrono::steady_clock::time_point> Lock::lease_deadline() const {
  auto s = holding_of(client_, primitive_, engine_);
  if (!s) return std::nullopt;
  return s->deadline();
}

bool Lock::lease_valid() const {
  auto s = holding_of(client_, primitive_, engine_);
  return s && s->valid();
}

namespace {

// The Lock `name` of `impl`'s backend: Redis's LockKeys, or another
// backend's engine.
Lock make_lock(const std::shared_ptr<detail::ClientImpl>& impl,
               std::string name,
               bool fenced,
               const LockOptions* options) {
  if (!impl) throw Error(errc::closed, "the client was moved from");
  if (auto* other = sync::backend_of(impl)) {
    return detail::Access::lock(
        other->lock(impl, std::move(name), fenced, options ? *options : LockOptions{}));
  }
  if (options == nullptr) {
    return detail::Access::lock(sync::services_of(impl), std::move(name), fenced);
  }
  return detail::Access::lock(sync::services_of(impl),
                              std::make_shared<const sync::LockKeys>(
                                  std::move(name), fenced, sync::checked_lock_delay(*options)));
}

}  // namespace

Lock Client::lock(std::string name) {
  return make_lock(impl_, std::move(name), false, nullptr);
}

Lock Client::fenced_lock(std::string name) {
  return make_lock(impl_, std::move(name), true, nullptr);
}

Lock Client::lock(std::string name, const LockOptions& options) {
  return make_lock(impl_, std::move(name), false, &options);
}

Lock Client::fenced_lock(std::string name, const LockOptions& options) {
  return make_lock(impl_, std::move(name), true, &options);
}

}  // namespace distlock
