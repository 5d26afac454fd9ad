// Lock's force_unlock and its queries of the server (is_locked, hold_count,
// remaining_ttl, ...), each in a throwing and an error_code& form; what they
// read is the primitive's (sync/primitive.hpp).
#include "backend/lock_engine.hpp"
#include "distlock/error.hpp"
#include "distlock/lock.hpp"
#include "runtime/identity.hpp"
#include "sync/arguments.hpp"
#include "sync/primitive.hpp"
#include "sync/services.hpp"

namespace distlock {

using std::chrono::milliseconds;
using sync::or_throw;

bool Lock::force_unlock() {
  return or_throw([&](std::error_code& ec, std::string& what) {
    return engine_ ? engine_->force_unlock(ec, what)
                   : primitive_->force_release(*client_, ec, what);
  });
}

bool Lock::force_unlock(std::error_code& ec) {
  std::string what;
  return engine_ ? engine_->force_unlock(ec, what) : primitive_->force_release(*client_, ec, what);
}

bool Lock::is_locked() const {
  return or_throw([&](std::error_code& ec, std::string& what) {
    return engine_ ? engine_->is_locked(ec, what) : primitive_->query_locked(*client_, ec, what);
  });
}

bool Lock::is_locked(std::error_code& ec) const {
  std::string what;
  return engine_ ? engine_->is_locked(ec, what) : primitive_->query_locked(*client_, ec, what);
}

bool Lock::is_held_by_current_thread() const {
  return hold_count() > 0;
}

bool Lock::is_held_by_current_thread(std::error_code& ec) const {
  return hold_count(ec) > 0;
}

std::uint32_t Lock::hold_count() const {
  return or_throw([&](std::error_code& ec, std::string& what) {
    if (engine_) return engine_->hold_count(ec, what);
    return primitive_->query_count(*client_, runtime::thread_owner(client_->client_id), ec, what);
  });
}

std::uint32_t Lock::hold_count(std::error_code& ec) const {
  std::string what;
  if (engine_) return engine_->hold_count(ec, what);
  return primitive_->query_count(*client_, runtime::thread_owner(client_->client_id), ec, what);
}

std::optional<milliseconds> Lock::remaining_ttl() const {
  return or_throw([&](std::error_code& ec, std::string& what) {
    return engine_ ? engine_->remaining_ttl(ec, what) : primitive_->query_ttl(*client_, ec, what);
  });
}

std::optional<milliseconds> Lock::remaining_ttl(std::error_code& ec) const {
  std::string what;
  return engine_ ? engine_->remaining_ttl(ec, what) : primitive_->query_ttl(*client_, ec, what);
}

}  // namespace distlock
