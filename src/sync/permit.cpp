// distlock::Permit: a Lease of its own permit holder (PermitPrimitive, whose
// release gives back all the holder holds and retires it) and the number of
// permits it holds.
#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "distlock/semaphore.hpp"
#include "runtime/lease_state.hpp"

namespace distlock {

Permit::Permit() noexcept = default;
Permit::Permit(std::shared_ptr<runtime::LeaseState> state, std::int64_t permits) noexcept
    : lease_(detail::Access::lease(std::move(state))), permits_(permits) {}
Permit::~Permit() = default;  // the Lease releases
Permit::Permit(Permit&& other) noexcept
    : lease_(std::move(other.lease_)), permits_(std::exchange(other.permits_, 0)) {}

Permit& Permit::operator=(Permit&& other) noexcept {
  if (this != &other) {
    lease_ = std::move(other.lease_);  // releases what this one held first
    permits_ = std::exchange(other.permits_, 0);
  }
  return *this;
}

bool Permit::valid() const noexcept {
  return lease_.valid();
}

std::chrono::steady_clock::time_point Permit::deadline() const noexcept {
  return lease_.deadline();
}

std::stop_token Permit::stop_token() const noexcept {
  return lease_.stop_token();
}

const std::string& Permit::name() const noexcept {
  return lease_.name();
}

void Permit::release() noexcept {
  lease_.release();
}

void Permit::release(std::error_code& ec) noexcept {
  // A lease lost before its first release reports lease_lost even when the
  // server still held the permits (a fixed lease ends locally a drift margin
  // before it does on the server): the holder could not count on them. The
  // state is looked at, then handed back to the Lease, which releases it.
  std::shared_ptr<runtime::LeaseState> state = detail::Access::take_state(lease_);
  const bool lost_before = state && state->lost() && !state->released.load();
  lease_ = detail::Access::lease(std::move(state));
  lease_.release(ec);
  if (!ec && lost_before) ec = errc::lease_lost;
}

}  // namespace distlock
