// SimpleLock's construction and the Client's factories. A SimpleLock is a Lock
// built on SimplePrimitive (the shared primitive seam), so its members are
// Lock's own, as are the holds, leases, pending releases and waiting.
#include "distlock/simple_lock.hpp"

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "sync/services.hpp"
#include "sync/simple_lock_poll.hpp"
#include "sync/simple_lock_primitive.hpp"

namespace distlock {

SimpleLock::SimpleLock(std::shared_ptr<sync::Services> client, std::string name, bool fenced)
    : Lock(detail::Access::lock(std::move(client),
                                std::make_shared<const sync::SimplePrimitive>(
                                    std::move(name), fenced, sync::simple_lock_poll_cap()))) {}

SimpleLock Client::simple_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return SimpleLock(sync::services_of(impl_), std::move(name), false);
}

SimpleLock Client::fenced_simple_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return SimpleLock(sync::services_of(impl_), std::move(name), true);
}

}  // namespace distlock
