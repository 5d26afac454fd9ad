// SimpleLock's construction and the Client's factories. A SimpleLock is a Lock
// built on SimplePrimitive (the shared primitive seam), so its members are
// Lock's own, as are the holds, leases, pending releases and waiting.
#include "distlock/simple_lock.hpp"

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "sync/arguments.hpp"
#include "sync/services.hpp"
#include "sync/simple_lock_poll.hpp"
#include "sync/simple_lock_primitive.hpp"

namespace distlock {

SimpleLock::SimpleLock(std::shared_ptr<sync::Services> client,
                       std::string name,
                       bool fenced,
                       std::chrono::milliseconds lock_delay)
    : Lock(detail::Access::lock(
          std::move(client),
          std::make_shared<const sync::SimplePrimitive>(
              std::move(name), fenced, sync::simple_lock_poll_cap(), lock_delay))) {}

SimpleLock Client::simple_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return SimpleLock(sync::services_for(impl_, "SET NX lock (simple_lock)"), std::move(name), false);
}

SimpleLock Client::fenced_simple_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return SimpleLock(sync::services_for(impl_, "SET NX lock (simple_lock)"), std::move(name), true);
}

SimpleLock Client::simple_lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return SimpleLock(sync::services_for(impl_, "SET NX lock (simple_lock)"), std::move(name), false,
                    sync::checked_lock_delay(options));
}

SimpleLock Client::fenced_simple_lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return SimpleLock(sync::services_for(impl_, "SET NX lock (simple_lock)"), std::move(name), true,
                    sync::checked_lock_delay(options));
}

}  // namespace distlock
