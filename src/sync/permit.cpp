// distlock::Permit: the handle over a PermitHolding, released by
// retiring its holder (semaphore_release.lua with n = all).
#include "distlock/error.hpp"
#include "distlock/semaphore.hpp"
#include "runtime/executor.hpp"
#include "runtime/watchdog.hpp"
#include "sync/semaphore_state.hpp"

namespace distlock {

Permit::Permit() noexcept = default;
Permit::Permit(std::shared_ptr<runtime::LeaseState> state, std::int64_t permits) noexcept
    : state_(std::move(state)), permits_(permits) {}
Permit::~Permit() {
  release();
}
Permit::Permit(Permit&& other) noexcept
    : state_(std::move(other.state_)), permits_(std::exchange(other.permits_, 0)) {}

Permit& Permit::operator=(Permit&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
    permits_ = std::exchange(other.permits_, 0);
  }
  return *this;
}

bool Permit::valid() const noexcept {
  return state_ && !state_->released.load() && state_->valid();
}

std::chrono::steady_clock::time_point Permit::deadline() const noexcept {
  return state_ ? state_->deadline() : std::chrono::steady_clock::time_point{};
}

std::stop_token Permit::stop_token() const noexcept {
  return state_ ? state_->stop_token() : std::stop_token();
}

const std::string& Permit::name() const noexcept {
  static const std::string empty;
  return state_ ? state_->name : empty;
}

void Permit::release() noexcept {
  std::error_code ignored;
  release(ignored);
}

void Permit::release(std::error_code& ec) noexcept {
  ec.clear();
  if (!state_ || state_->released.exchange(true)) return;
  auto holding = std::static_pointer_cast<sync::PermitHolding>(state_);
  sync::Services& client = *holding->services;
  client.watchdog.remove(holding.get());
  if (client.executor.closed()) {
    ec = errc::closed;  // no longer renewed: the lease ends on the server by itself
    return;
  }
  if (client.executor.on_io_thread()) {
    // Destroyed in a handler on the I/O thread: blocking would deadlock.
    sync::release_in_background(client, std::move(holding));
    return;
  }
  const bool lost_before = holding->lost();
  const auto r = sync::release_permits(client, *holding, 0, true, ec);
  if (ec) return;
  // -1: the server had ended the lease and given the permits back already.
  if (r == -1 || lost_before) ec = errc::lease_lost;
}

}  // namespace distlock
