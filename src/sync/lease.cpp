#include "distlock/lease.hpp"

#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/watchdog.hpp"
#include "sync/holding.hpp"
#include "sync/lock_ops.hpp"

namespace distlock {

Lease::Lease() noexcept = default;
Lease::Lease(std::shared_ptr<runtime::LeaseState> state) noexcept : state_(std::move(state)) {}
Lease::~Lease() {
  release();
}
Lease::Lease(Lease&& other) noexcept : state_(std::move(other.state_)) {}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::move(other.state_);
  }
  return *this;
}

bool Lease::valid() const noexcept {
  return state_ && state_->valid();
}

std::chrono::milliseconds Lease::remaining() const noexcept {
  if (!valid()) return std::chrono::milliseconds(0);
  const auto left = state_->deadline() - runtime::Clock::now();
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(left));
}

std::chrono::steady_clock::time_point Lease::deadline() const noexcept {
  return state_ ? state_->deadline() : std::chrono::steady_clock::time_point{};
}

std::stop_token Lease::stop_token() const noexcept {
  return state_ ? state_->stop_token() : std::stop_token();
}

std::optional<std::uint64_t> Lease::fencing_token() const noexcept {
  return state_ ? state_->fencing_token : std::nullopt;
}

const std::string& Lease::name() const noexcept {
  static const std::string empty;
  return state_ ? state_->name : empty;
}

std::shared_ptr<sync::Services> Lease::services() const noexcept {
  return state_ && !state_->foreign() ? sync::holding(*state_).services : nullptr;
}

void Lease::release() noexcept {
  std::error_code ignored;
  release(ignored);
}

void Lease::release(std::error_code& ec) noexcept {
  ec.clear();
  if (!state_) return;
  if (state_->foreign()) return state_->release_foreign(ec);
  const bool valid_before = state_->valid();
  if (state_->released.exchange(true)) return;
  const std::shared_ptr<sync::Holding> state = sync::holding(state_);
  sync::Services& client = *state->services;
  client.watchdog.remove(state.get());
  if (client.executor.closed()) {
    ec = errc::closed;  // no longer renewed: it expires on the server by itself
    return;
  }
  if (client.executor.on_io_thread()) {
    // Destroyed inside a handler on the I/O thread: blocking would deadlock,
    // so the release is settled in the background.
    sync::PendingRelease::start(client, state, 1, true, valid_before);
    return;
  }
  const auto result = sync::release_blocking(client, *state, 1, ec);
  ec = sync::finish_release(client, state, 1, valid_before, result, ec, nullptr);
}

}  // namespace distlock
