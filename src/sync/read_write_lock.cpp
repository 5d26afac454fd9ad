#include "distlock/read_write_lock.hpp"

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "sync/read_write_lock_sides.hpp"
#include "sync/services.hpp"

namespace distlock {

ReadWriteLock::ReadWriteLock(std::shared_ptr<sync::Services> client, std::string name, bool fenced)
    : Lock(detail::Access::lock(client, std::make_shared<const sync::WriteSide>(name, fenced))),
      read_(detail::Access::lock(std::move(client),
                                 std::make_shared<const sync::ReadSide>(std::move(name)))) {}

ReadWriteLock Client::read_write_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return ReadWriteLock(sync::services_of(impl_), std::move(name), false);
}

ReadWriteLock Client::fenced_read_write_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return ReadWriteLock(sync::services_of(impl_), std::move(name), true);
}

}  // namespace distlock
