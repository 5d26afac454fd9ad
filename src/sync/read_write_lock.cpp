#include "distlock/read_write_lock.hpp"

#include <optional>
#include <utility>

#include "backend/backend.hpp"
#include "backend/sql_lock.hpp"
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

namespace {

// The read-write lock of a backend other than Redis that has one
// (PostgreSQL's shared and exclusive advisory locks); nullopt on Redis.
// Throws Error(not_supported) for a backend without one.
std::optional<std::pair<Lock, Lock>> other_backends(const std::shared_ptr<detail::ClientImpl>& impl,
                                                    const std::string& name,
                                                    bool fenced,
                                                    const LockOptions& options) {
  auto* other = sync::backend_of(impl);
  if (other == nullptr) return std::nullopt;
  auto write = other->lock(impl, name, fenced, options);
  auto read = backend::sql::shared_lock(*other, impl, name);
  return std::make_pair(detail::Access::lock(std::move(write)),
                        detail::Access::lock(std::move(read)));
}

}  // namespace

ReadWriteLock Client::read_write_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  if (auto other = other_backends(impl_, name, false, LockOptions{})) {
    return ReadWriteLock(std::move(other->first), std::move(other->second));
  }
  return ReadWriteLock(sync::services_for(impl_, "read-write lock"), std::move(name), false);
}

ReadWriteLock Client::fenced_read_write_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  if (auto other = other_backends(impl_, name, true, LockOptions{})) {
    return ReadWriteLock(std::move(other->first), std::move(other->second));
  }
  return ReadWriteLock(sync::services_for(impl_, "read-write lock"), std::move(name), true);
}

ReadWriteLock Client::read_write_lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  if (auto other = other_backends(impl_, name, false, options)) {
    return ReadWriteLock(std::move(other->first), std::move(other->second));
  }
  return ReadWriteLock(sync::services_for(impl_, "read-write lock"), std::move(name), false,
                       sync::checked_lock_delay(options));
}

ReadWriteLock Client::fenced_read_write_lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  if (auto other = other_backends(impl_, name, true, options)) {
    return ReadWriteLock(std::move(other->first), std::move(other->second));
  }
  return ReadWriteLock(sync::services_for(impl_, "read-write lock"), std::move(name), true,
                       sync::checked_lock_delay(options));
}

}  // namespace distlock
