// The public Redlock handles (distlock/redlock.hpp): RedlockGroup,
// RedlockLock and RedlockLease over a sync::RedlockCore.
#include "distlock/error.hpp"
#include "distlock/redlock.hpp"
#include "sync/arguments.hpp"
#include "sync/redlock_core.hpp"

namespace distlock {
namespace {

using sync::RedlockClock;

using sync::deadline_after;
using sync::throw_if;

// Arguments a call rejects before anything is sent; sets ec and the message.
bool rejected(std::optional<std::chrono::milliseconds> wait,
              std::optional<std::chrono::milliseconds> lease,
              std::error_code& ec,
              std::string& message) {
  if (!sync::rejected(wait, lease, ec)) return false;
  message = "Redlock: " + sync::wait_lease_problem(wait, lease);
  return true;
}

}  // namespace

// --- RedlockGroup --------------------------------------------------------------

RedlockGroup::RedlockGroup(std::vector<std::string> uris, RedlockOptions options)
    : core_(std::make_shared<sync::RedlockCore>(std::move(uris), std::move(options))) {
  core_->start();
}

RedlockGroup::~RedlockGroup() {
  if (core_) core_->close();
}

RedlockGroup::RedlockGroup(RedlockGroup&&) noexcept = default;

RedlockGroup& RedlockGroup::operator=(RedlockGroup&& other) noexcept {
  if (this != &other) {
    if (core_) core_->close();
    core_ = std::move(other.core_);
  }
  return *this;
}

RedlockLock RedlockGroup::lock(std::string name) {
  if (!core_) throw Error(errc::closed, "RedlockGroup: moved from");
  return RedlockLock(core_, std::move(name));
}

std::size_t RedlockGroup::size() const noexcept {
  return core_ ? core_->size() : 0;
}

std::size_t RedlockGroup::quorum() const noexcept {
  return core_ ? core_->quorum() : 0;
}

const RedlockOptions& RedlockGroup::options() const noexcept {
  static const RedlockOptions defaults;
  return core_ ? core_->options : defaults;
}

MetricsSnapshot RedlockGroup::metrics() const {
  return core_ ? core_->metrics_snapshot() : MetricsSnapshot{};
}

void RedlockGroup::close() noexcept {
  if (core_) core_->close();
}

bool RedlockGroup::closed() const noexcept {
  return !core_ || core_->closed();
}

// --- RedlockLock: thread-owned ----------------------------------------------------

RedlockLock::RedlockLock(std::shared_ptr<sync::RedlockCore> core, std::string name)
    : core_(std::move(core)), name_(std::move(name)) {
  sync::validate_name(name_, "Redlock lock");
}

void RedlockLock::lock() {
  std::error_code ec;
  std::string message;
  lock_ms(std::nullopt, ec, message);
  throw_if(ec, message);
}

void RedlockLock::lock(std::error_code& ec) {
  std::string message;
  lock_ms(std::nullopt, ec, message);
}

void RedlockLock::lock(std::chrono::milliseconds lease) {
  std::error_code ec;
  std::string message;
  lock_ms(lease, ec, message);
  throw_if(ec, message);
}

void RedlockLock::lock(std::chrono::milliseconds lease, std::error_code& ec) {
  std::string message;
  lock_ms(lease, ec, message);
}

void RedlockLock::lock_ms(std::optional<std::chrono::milliseconds> lease,
                          std::error_code& ec,
                          std::string& message) {
  ec.clear();
  if (rejected(std::nullopt, lease, ec, message)) return;
  if (core_->thread_hold(name_)) {
    // Not reentrant: waiting for itself would never end.
    ec = errc::invalid_argument;
    message = "RedlockLock '" + name_ + "': lock() by the thread that already holds it";
    return;
  }
  try_lock_ms(std::chrono::milliseconds::max(), lease, ec, message);
}

bool RedlockLock::try_lock() {
  return try_lock_ms(std::chrono::milliseconds(0), std::nullopt);
}

bool RedlockLock::try_lock(std::error_code& ec) {
  return try_lock_ms(std::chrono::milliseconds(0), std::nullopt, ec);
}

bool RedlockLock::try_lock_ms(std::chrono::milliseconds wait,
                              std::optional<std::chrono::milliseconds> lease) {
  std::error_code ec;
  std::string message;
  const bool got = try_lock_ms(wait, lease, ec, message);
  throw_if(ec, message);
  return got;
}

bool RedlockLock::try_lock_ms(std::chrono::milliseconds wait,
                              std::optional<std::chrono::milliseconds> lease,
                              std::error_code& ec) {
  std::string message;
  return try_lock_ms(wait, lease, ec, message);
}

bool RedlockLock::try_lock_ms(std::chrono::milliseconds wait,
                              std::optional<std::chrono::milliseconds> lease,
                              std::error_code& ec,
                              std::string& message) {
  ec.clear();
  if (rejected(wait, lease, ec, message)) return false;
  if (core_->thread_hold(name_)) return false;  // not reentrant
  auto outcome = core_->acquire(name_, lease, deadline_after(wait));
  ec = outcome.ec;
  message = std::move(outcome.message);
  if (!outcome.holding) return false;
  core_->set_thread_hold(name_, std::move(outcome.holding));
  return true;
}

void RedlockLock::unlock() noexcept {
  std::error_code ignored;
  unlock(ignored);
}

void RedlockLock::unlock(std::error_code& ec) noexcept {
  ec.clear();
  auto holding = core_->take_thread_hold(name_);
  if (!holding) {
    ec = errc::not_owner;
    return;
  }
  ec = core_->release(holding);
}

bool RedlockLock::is_held_by_current_thread() const noexcept {
  auto holding = core_->thread_hold(name_);
  return holding && holding->valid();
}

std::stop_token RedlockLock::stop_token() const noexcept {
  auto holding = core_->thread_hold(name_);
  return holding ? holding->stop_token() : std::stop_token();
}

std::optional<std::chrono::steady_clock::time_point> RedlockLock::lease_deadline() const noexcept {
  auto holding = core_->thread_hold(name_);
  if (!holding) return std::nullopt;
  return holding->deadline();
}

// --- RedlockLock: handle-owned ---------------------------------------------------

RedlockLease RedlockLock::acquire() {
  auto lease = try_acquire_ms(std::chrono::milliseconds::max(), std::nullopt);
  return std::move(*lease);
}

RedlockLease RedlockLock::acquire(std::error_code& ec) {
  auto lease = try_acquire_ms(std::chrono::milliseconds::max(), std::nullopt, ec);
  return lease ? std::move(*lease) : RedlockLease();
}

std::optional<RedlockLease> RedlockLock::try_acquire() {
  return try_acquire_ms(std::chrono::milliseconds(0), std::nullopt);
}

std::optional<RedlockLease> RedlockLock::try_acquire(std::error_code& ec) {
  return try_acquire_ms(std::chrono::milliseconds(0), std::nullopt, ec);
}

std::optional<RedlockLease> RedlockLock::try_acquire_ms(
    std::chrono::milliseconds wait, std::optional<std::chrono::milliseconds> lease) {
  std::error_code ec;
  std::string message;
  auto got = try_acquire_ms(wait, lease, ec, message);
  throw_if(ec, message);
  return got;
}

std::optional<RedlockLease> RedlockLock::try_acquire_ms(
    std::chrono::milliseconds wait,
    std::optional<std::chrono::milliseconds> lease,
    std::error_code& ec) {
  std::string message;
  return try_acquire_ms(wait, lease, ec, message);
}

std::optional<RedlockLease> RedlockLock::try_acquire_ms(
    std::chrono::milliseconds wait,
    std::optional<std::chrono::milliseconds> lease,
    std::error_code& ec,
    std::string& message) {
  ec.clear();
  if (rejected(wait, lease, ec, message)) return std::nullopt;
  auto outcome = core_->acquire(name_, lease, deadline_after(wait));
  ec = outcome.ec;
  message = std::move(outcome.message);
  if (!outcome.holding) return std::nullopt;
  return RedlockLease(std::move(outcome.holding));
}

// --- RedlockLease ----------------------------------------------------------------

RedlockLease::RedlockLease() noexcept = default;
RedlockLease::RedlockLease(std::shared_ptr<runtime::LeaseState> state) noexcept
    : state_(std::move(state)) {}
RedlockLease::~RedlockLease() {
  release();
}
RedlockLease::RedlockLease(RedlockLease&& other) noexcept : state_(std::move(other.state_)) {}

RedlockLease& RedlockLease::operator=(RedlockLease&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
  }
  return *this;
}

bool RedlockLease::valid() const noexcept {
  return state_ && state_->valid();
}

std::chrono::milliseconds RedlockLease::remaining() const noexcept {
  if (!valid()) return std::chrono::milliseconds(0);
  const auto left = state_->deadline() - RedlockClock::now();
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(left));
}

std::chrono::steady_clock::time_point RedlockLease::deadline() const noexcept {
  return state_ ? state_->deadline() : std::chrono::steady_clock::time_point{};
}

std::stop_token RedlockLease::stop_token() const noexcept {
  return state_ ? state_->stop_token() : std::stop_token();
}

const std::string& RedlockLease::name() const noexcept {
  static const std::string empty;
  return state_ ? state_->name : empty;
}

void RedlockLease::release() noexcept {
  std::error_code ignored;
  release(ignored);
}

void RedlockLease::release(std::error_code& ec) noexcept {
  ec.clear();
  if (!state_) return;
  auto holding = std::static_pointer_cast<sync::RedlockHolding>(std::move(state_));
  ec = holding->core->release(holding);
}

}  // namespace distlock
