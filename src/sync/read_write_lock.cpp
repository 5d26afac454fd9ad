#include "distlock/read_write_lock.hpp"

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "sync/arguments.hpp"
#include "sync/read_write_lock_sides.hpp"
#include "sync/services.hpp"

namespace distlock {

ReadWriteLock::ReadWriteLock(std::shared_ptr<sync::Services> client,
                             std::string name,
                             bool fenced,
                             std::chrono::milliseconds lock_delay)
    : Lock(detail::Access::lock(client,
                                std::make_shared<const sync::WriteSide>(name, fenced, lock_delay))),
      read_(detail::Access::lock(
          std::move(client), std::make_shared<const sync::ReadSide>(std::move(name), lock_delay))) {
}

ReadWriteLock Client::read_write_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return ReadWriteLock(sync::services_for(impl_, "read-write lock"), std::move(name), false);
}

ReadWriteLock Client::fenced_read_write_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return ReadWriteLock(sync::services_for(impl_, "read-write lock"), std::move(name), true);
}

ReadWriteLock Client::read_write_lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return ReadWriteLock(sync::services_for(impl_, "read-write lock"), std::move(name), false,
                       sync::checked_lock_delay(options));
}

ReadWriteLock Client::fenced_read_write_lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return ReadWriteLock(sync::services_for(impl_, "read-write lock"), std::move(name), true,
                       sync::checked_lock_delay(options));
}

}  // namespace distlock
