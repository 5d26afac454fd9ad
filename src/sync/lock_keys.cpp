#include "sync/lock_keys.hpp"

#include "distlock/error.hpp"
#include "sync/key_layout.hpp"

namespace distlock::sync {
LockKeys::LockKeys(std::string lock_name, bool fenced, std::chrono::milliseconds lock_delay)
    : Primitive(std::move(lock_name), "lock"), channel(lock_channel(name)) {
  if (fenced) fence = fencing_counter_key(name);
  if (lock_delay.count() > 0) {
    delay_key = lock_delay_key(name);
    delay_text = std::to_string(lock_delay.count());
  }
}

runtime::Renewal LockKeys::renewal(const std::string& owner) const {
  if (!delay_key.empty()) {
    return {runtime::Renewal::Kind::hash_field_delayed, name, owner, delay_key};
  }
  return {runtime::Renewal::Kind::hash_field, name, owner, {}};
}

}  // namespace distlock::sync
