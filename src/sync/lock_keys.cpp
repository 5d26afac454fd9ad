#include "sync/lock_keys.hpp"

#include "distlock/error.hpp"
#include "topology/slot.hpp"

namespace distlock::sync {
std::string fence_key_for(const std::string& name) {
  using topology::key_slot;
  const std::string redisson = "redisson_lock_token:{" + name + "}";
  const auto slot = key_slot(name);
  if (key_slot(redisson) == slot) return redisson;
  const auto tag = topology::hash_tag(name);
  if (tag.size() != name.size()) {
    // The name has a hash tag of its own: reuse it.
    return "redisson_lock_token:{" + std::string(tag) + "}:" + name;
  }
  // The name hashes whole but contains a brace (e.g. "a}b"): find a short tag
  // with the same slot. Deterministic, so every client derives the same key;
  // a match is found within a few tens of thousands of tries.
  for (unsigned i = 0;; ++i) {
    const std::string candidate = std::to_string(i);
    if (key_slot(candidate) == slot) return "redisson_lock_token:{" + candidate + "}:" + name;
  }
}

std::string redisson_channel(std::string_view prefix, const std::string& name) {
  // Redisson's RedissonObject.prefixName: braces only when the name has none,
  // so both sides hear each other's unlocks for names like "{tenant}:job".
  std::string channel(prefix);
  if (name.find('{') == std::string::npos) {
    channel += ":{" + name + "}";
  } else {
    channel += ":" + name;
  }
  return channel;
}

LockKeys::LockKeys(std::string lock_name, bool fenced)
    : Primitive(std::move(lock_name), "lock"),
      channel(redisson_channel("redisson_lock__channel", name)) {
  if (fenced) fence = fence_key_for(name);
}

runtime::Renewal LockKeys::renewal(const std::string& owner) const {
  return {runtime::Renewal::Kind::hash_field, name, owner, {}};
}

}  // namespace distlock::sync
