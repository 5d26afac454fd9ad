#include "sync/lock_keys.hpp"

#include "distlock/error.hpp"
#include "sync/key_layout.hpp"

namespace distlock::sync {
LockKeys::LockKeys(std::string lock_name, bool fenced, std::chrono::milliseconds lock_delay)
    : Primitive(std::move(lock_name), "lock"),
      channel(lock_channel(name)),
      delay(name, lock_delay) {
  if (fenced) fence = fencing_counter_key(name);
}

runtime::Renewal LockKeys::renewal(const std::string& owner) const {
  if (delay.on()) {
    return {runtime::Renewal::Kind::hash_field_delayed, name, owner, delay.key};
  }
  return {runtime::Renewal::Kind::hash_field, name, owner, {}};
}

}  // namespace distlock::sync
