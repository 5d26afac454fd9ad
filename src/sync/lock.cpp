#include "distlock/lock.hpp"

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

const std::string& Lock::name() const noexcept {
  return primitive_->name();
}
bool Lock::fenced() const noexcept {
  return primitive_->fenced();
}

void Lock::lock() {
  auto o = sync::acquire_for_thread(client_, primitive_, std::nullopt, std::nullopt);
  if (o.ec) throw_outcome(o);
}

void Lock::lock(std::error_code& ec) {
  ec = sync::acquire_for_thread(client_, primitive_, std::nullopt, std::nullopt).ec;
}

void Lock::lock(milliseconds lease) {
  check_lease(lease);
  auto o = sync::acquire_for_thread(client_, primitive_, std::nullopt, lease);
  if (o.ec) throw_outcome(o);
}

void Lock::lock(milliseconds lease, std::error_code& ec) {
  if (sync::rejected(std::nullopt, lease, ec)) return;
  ec = sync::acquire_for_thread(client_, primitive_, std::nullopt, lease).ec;
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
  auto o = sync::acquire_for_thread(client_, primitive_, wait, lease);
  if (o.ec) throw_outcome(o);
  return o.acquired;
}

bool Lock::try_lock_for(milliseconds wait, milliseconds lease) {
  return try_lock_for_ms(wait, lease);
}

bool Lock::try_lock_for(milliseconds wait, std::optional<milliseconds> lease, std::error_code& ec) {
  if (sync::rejected(wait, lease, ec)) return false;
  auto o = sync::acquire_for_thread(client_, primitive_, wait, lease);
  ec = o.ec;
  return o.acquired;
}

void Lock::unlock() noexcept {
  std::error_code ignored;
  unlock(ignored);
}

void Lock::unlock(std::error_code& ec) noexcept {
  ec = sync::unlock_for_thread(*client_, *primitive_);
}

std::optional<std::uint64_t> Lock::fencing_token() const {
  auto s = sync::thread_holding(*client_, *primitive_);
  return s ? s->fencing_token : std::nullopt;
}

std::stop_token Lock::stop_token() const {
  auto s = sync::thread_holding(*client_, *primitive_);
  return s ? s->stop_token() : std::stop_token();
}

std::optional<std::chrono::steady_clock::time_point> Lock::lease_deadline() const {
  auto s = sync::thread_holding(*client_, *primitive_);
  if (!s) return std::nullopt;
  return s->deadline();
}

bool Lock::lease_valid() const {
  auto s = sync::thread_holding(*client_, *primitive_);
  return s && s->valid();
}

Lock Client::lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return detail::Access::lock(sync::services_of(impl_), std::move(name), false);
}

Lock Client::fenced_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return detail::Access::lock(sync::services_of(impl_), std::move(name), true);
}

Lock Client::lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return detail::Access::lock(sync::services_of(impl_),
                              std::make_shared<const sync::LockKeys>(
                                  std::move(name), false, sync::checked_lock_delay(options)));
}

Lock Client::fenced_lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return detail::Access::lock(sync::services_of(impl_),
                              std::make_shared<const sync::LockKeys>(
                                  std::move(name), true, sync::checked_lock_delay(options)));
}

}  // namespace distlock
