// The Redis keys and channel one lock uses (Redisson's RLock layout).
#pragma once

#include <string>

namespace distlock::sync {

struct LockKeys {
  // Validates `name` (non-empty, at most 64 KiB); throws Error(invalid_argument).
  LockKeys(std::string name, bool fenced);

  std::string name;     // the lock hash's key
  std::string channel;  // redisson_lock__channel:{name}, or :name when it has a '{'
  std::string fence;    // fencing counter key; empty unless fenced
};

// The fencing counter's key for `name`: "redisson_lock_token:{name}" (as
// Redisson's fenced lock) whenever that hashes to the same cluster slot as
// `name`; otherwise a key that does, so every key of one lock shares a slot
// for any name, including names with '{' or '}'.
std::string fence_key_for(const std::string& name);

}  // namespace distlock::sync
