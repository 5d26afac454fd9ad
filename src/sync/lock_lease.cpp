// Lock's handle-owned acquisitions: each makes a Lease with its own random
// owner, which any thread may release.
#include "backend/lock_engine.hpp"
#include "distlock/lock.hpp"
#include "sync/arguments.hpp"
#include "sync/services.hpp"
#include "sync/thread_holds.hpp"

namespace distlock {

using std::chrono::milliseconds;
using sync::check_lease;
using sync::check_wait;

namespace {

// Every handle-owned acquire of a Lock: Redis's shared holds, or the engine
// of another backend.
std::optional<Lease> acquire_lease(const std::shared_ptr<sync::Services>& client,
                                   const std::shared_ptr<const sync::Primitive>& primitive,
                                   const std::shared_ptr<backend::LockEngine>& engine,
                                   std::optional<milliseconds> wait,
                                   std::optional<milliseconds> lease,
                                   std::error_code& ec,
                                   std::string& message) {
  if (engine) return engine->acquire_lease(wait, lease, ec, message);
  return sync::acquire_lease(client, primitive, wait, lease, ec, message);
}

}  // namespace

Lease Lock::acquire() {
  std::error_code ec;
  std::string message;
  auto l = acquire_lease(client_, primitive_, engine_, std::nullopt, std::nullopt, ec, message);
  sync::throw_if(ec, message);
  return std::move(*l);
}

Lease Lock::acquire(std::error_code& ec) {
  std::string message;
  auto l = acquire_lease(client_, primitive_, engine_, std::nullopt, std::nullopt, ec, message);
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
  auto l = acquire_lease(client_, primitive_, engine_, wait, std::nullopt, ec, message);
  sync::throw_if(ec, message);
  return l;
}

std::optional<Lease> Lock::try_acquire_for(milliseconds wait, milliseconds lease) {
  check_wait(wait);
  check_lease(lease);
  std::error_code ec;
  std::string message;
  auto l = acquire_lease(client_, primitive_, engine_, wait, lease, ec, message);
  sync::throw_if(ec, message);
  return l;
}

std::optional<Lease> Lock::try_acquire_for(milliseconds wait,
                                           std::optional<milliseconds> lease,
                                           std::error_code& ec) {
  if (sync::rejected(wait, lease, ec)) return std::nullopt;
  std::string message;
  return acquire_lease(client_, primitive_, engine_, wait, lease, ec, message);
}

}  // namespace distlock
