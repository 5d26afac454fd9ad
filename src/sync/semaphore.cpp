// Semaphore's public members and the Client's factory: validate
// at the API, then forward to the Client-held state or the scripts.
#include "distlock/semaphore.hpp"

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "runtime/identity.hpp"
#include "sync/arguments.hpp"
#include "sync/lock_ops.hpp"
#include "sync/permit_step.hpp"
#include "sync/semaphore_state.hpp"

namespace distlock {
namespace {

using sync::throw_if;

// Counts must be positive everywhere; checked before any I/O.
bool bad_count(std::int64_t n, std::error_code& ec) {
  if (n > 0) return false;
  ec = make_error_code(errc::invalid_argument);
  return true;
}

std::string count_message(const char* call, std::int64_t n) {
  return std::string("semaphore ") + call + ": the number of permits must be > 0, got " +
         std::to_string(n);
}

[[noreturn]] void negative_wait(const char* call) {
  throw Error(errc::invalid_argument, std::string("semaphore ") + call + ": the wait is negative");
}

}  // namespace

Semaphore::Semaphore(std::shared_ptr<sync::Services> client, std::string name)
    : state_(sync::SemaphoreState::of(std::move(client), std::move(name))) {}

const std::string& Semaphore::name() const noexcept {
  return state_->permits->name;
}

bool Semaphore::try_set_permits(std::int64_t permits, std::error_code& ec) {
  ec.clear();
  if (permits < 0) {
    ec = errc::invalid_argument;
    return false;
  }
  return state_->permits->admin(*state_->services, "set", permits, ec) == 1;
}

bool Semaphore::try_set_permits(std::int64_t permits) {
  if (permits < 0) {
    throw Error(errc::invalid_argument,
                "semaphore try_set_permits: permits must be >= 0, got " + std::to_string(permits));
  }
  std::error_code ec;
  const bool set = try_set_permits(permits, ec);
  throw_if(ec, "semaphore try_set_permits");
  return set;
}

void Semaphore::add_permits(std::int64_t delta, std::error_code& ec) {
  ec.clear();
  if (delta == 0) {
    ec = errc::invalid_argument;
    return;
  }
  state_->permits->admin(*state_->services, "add", delta, ec);
}

void Semaphore::add_permits(std::int64_t delta) {
  if (delta == 0) throw Error(errc::invalid_argument, "semaphore add_permits: delta is 0");
  std::error_code ec;
  add_permits(delta, ec);
  throw_if(ec, "semaphore add_permits");
}

std::int64_t Semaphore::available_permits(std::error_code& ec) const {
  return state_->permits->admin(*state_->services, "get", 0, ec);
}

std::int64_t Semaphore::available_permits() const {
  std::error_code ec;
  const auto v = available_permits(ec);
  throw_if(ec, "semaphore available_permits");
  return v;
}

std::int64_t Semaphore::drain_permits(std::error_code& ec) {
  return state_->permits->admin(*state_->services, "drain", 0, ec);
}

std::int64_t Semaphore::drain_permits() {
  std::error_code ec;
  const auto v = drain_permits(ec);
  throw_if(ec, "semaphore drain_permits");
  return v;
}

void Semaphore::acquire(std::int64_t n, std::error_code& ec) {
  ec.clear();
  if (bad_count(n, ec)) return;
  state_->acquire(n, std::nullopt, ec);
}

void Semaphore::acquire(std::int64_t n) {
  if (n <= 0) throw Error(errc::invalid_argument, count_message("acquire", n));
  std::error_code ec;
  acquire(n, ec);
  throw_if(ec, "semaphore acquire");
}

bool Semaphore::try_acquire(std::int64_t n, std::error_code& ec) {
  // A deadline in the past makes exactly one attempt.
  return try_acquire_until(n, std::chrono::steady_clock::time_point::min(), ec);
}

bool Semaphore::try_acquire(std::int64_t n) {
  return try_acquire_until(n, std::chrono::steady_clock::time_point::min());
}

bool Semaphore::try_acquire_for_ms(std::int64_t n, std::chrono::milliseconds wait) {
  if (wait < wait.zero()) negative_wait("try_acquire_for");
  if (n <= 0) throw Error(errc::invalid_argument, count_message("try_acquire", n));
  std::error_code ec;
  const bool acquired = try_acquire_for_ms(n, wait, ec);
  throw_if(ec, "semaphore try_acquire");
  return acquired;
}

bool Semaphore::try_acquire_for_ms(std::int64_t n,
                                   std::chrono::milliseconds wait,
                                   std::error_code& ec) {
  ec.clear();
  if (wait < wait.zero()) {
    ec = errc::invalid_argument;
    return false;
  }
  if (bad_count(n, ec)) return false;
  return state_->acquire(n, sync::deadline_after(wait), ec);
}

bool Semaphore::try_acquire_until(std::int64_t n,
                                  std::chrono::steady_clock::time_point deadline,
                                  std::error_code& ec) {
  ec.clear();
  if (bad_count(n, ec)) return false;
  return state_->acquire(n, deadline, ec);
}

bool Semaphore::try_acquire_until(std::int64_t n, std::chrono::steady_clock::time_point deadline) {
  if (n <= 0) throw Error(errc::invalid_argument, count_message("try_acquire", n));
  std::error_code ec;
  const bool acquired = try_acquire_until(n, deadline, ec);
  throw_if(ec, "semaphore try_acquire");
  return acquired;
}

void Semaphore::release(std::int64_t n, std::error_code& ec) {
  ec.clear();
  if (bad_count(n, ec)) return;
  state_->release(n, ec);
}

void Semaphore::release(std::int64_t n) {
  if (n <= 0) throw Error(errc::invalid_argument, count_message("release", n));
  std::error_code ec;
  release(n, ec);
  if (ec == errc::not_owner) {
    throw Error(
        ec, "semaphore release: this client holds fewer than " + std::to_string(n) + " permits");
  }
  throw_if(ec, "semaphore release");
}

std::int64_t Semaphore::held_permits() const {
  return state_->held();
}

// --- expiring permits ------------------------------------------------------------

namespace {

std::optional<Permit> acquire_permit_until(sync::SemaphoreState& s,
                                           std::int64_t n,
                                           std::optional<std::chrono::steady_clock::time_point> at,
                                           std::optional<std::chrono::milliseconds> lease) {
  if (n <= 0) throw Error(errc::invalid_argument, count_message("acquire_permit", n));
  if (lease && lease->count() <= 0) {
    throw Error(errc::invalid_argument, "semaphore acquire_permit: the lease must be > 0 ms, got " +
                                            std::to_string(lease->count()));
  }
  // A Lease of its own holder id: an attempt without reply is undone by
  // retiring that holder.
  auto holding =
      std::make_shared<sync::Holding>(s.services, s.permits, runtime::random_token(), lease);
  auto step = std::make_unique<sync::PermitStep>(*s.services, *s.permits, holding, n);
  const auto o = sync::acquire_blocking(*s.services, holding, std::move(step), at);
  if (!o.acquired) {
    throw_if(o.ec, "semaphore acquire_permit");
    return std::nullopt;
  }
  return Permit(std::move(holding), n);
}

}  // namespace

Permit Semaphore::acquire_permit(std::int64_t n, std::optional<std::chrono::milliseconds> lease) {
  return std::move(*acquire_permit_until(*state_, n, std::nullopt, lease));
}

std::optional<Permit> Semaphore::try_acquire_permit(
    std::int64_t n,
    std::chrono::milliseconds wait,
    std::optional<std::chrono::milliseconds> lease) {
  if (wait < wait.zero()) negative_wait("try_acquire_permit");
  return acquire_permit_until(*state_, n, sync::deadline_after(wait), lease);
}

Semaphore Client::semaphore(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return Semaphore(sync::services_for(impl_, "semaphore"), std::move(name));
}

}  // namespace distlock
