// Lock's handle-owned acquisitions: each makes a Lease with its own random
// owner, which any thread may release.
#include "distlock/lock.hpp"
#include "runtime/identity.hpp"
#include "sync/holding.hpp"
#include "sync/lock_args.hpp"
#include "sync/lock_ops.hpp"
#include "sync/services.hpp"

namespace distlock {

using std::chrono::milliseconds;
using sync::check_lease;
using sync::check_wait;

static std::optional<Lease> acquire_lease(const std::shared_ptr<sync::Services>& client,
                                          const std::shared_ptr<const sync::LockKeys>& keys,
                                          std::optional<milliseconds> wait,
                                          std::optional<milliseconds> lease,
                                          std::error_code& ec,
                                          std::string& message) {
  auto state = std::make_shared<sync::Holding>(
      client, keys, client->client_id + ":" + runtime::random_token(), lease);
  auto o = sync::acquire_blocking(*client, state, 1, sync::deadline_after(wait));
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

}  // namespace distlock
