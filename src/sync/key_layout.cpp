#include "sync/key_layout.hpp"

#include "topology/slot.hpp"

namespace distlock::sync {
namespace {

// The prefixes of the keys that hang off another key (is_auxiliary_key).
constexpr std::string_view kFairQueue = "redisson_lock_queue";
constexpr std::string_view kFairTimeout = "redisson_lock_timeout";
constexpr std::string_view kSemaphoreHolders = "distlock_sem_holders";
constexpr std::string_view kSemaphoreCounts = "distlock_sem_counts";
constexpr std::string_view kSemaphoreV1Leases = "distlock_semaphore_leases";
constexpr std::string_view kSemaphoreV1Holders = "distlock_semaphore_holders";
constexpr std::string_view kFencingCounter = "redisson_lock_token";
constexpr std::string_view kReadTimeout = "rwlock_timeout";
constexpr std::string_view kLockDelay = "distlock_lock_delay";

// Redisson's RedissonObject.prefixName: braces only when the name has none,
// so both sides agree for names like "{tenant}:job".
std::string prefixed(std::string_view prefix, std::string_view name) {
  std::string key(prefix);
  if (name.find('{') == std::string_view::npos) {
    key.append(":{").append(name).append("}");
  } else {
    key.append(":").append(name);
  }
  return key;
}

// "<prefix>:{name}" whenever that shares `name`'s cluster slot; otherwise a
// key that does: every key of one fair lock must live on one node for its
// scripts.
std::string same_slot_key(std::string_view prefix, std::string_view name) {
  std::string key = prefixed(prefix, name);
  if (topology::key_slot(key) == topology::key_slot(name)) return key;
  return std::string(prefix) + ":" + fencing_counter_key(name);
}

}  // namespace

std::string fencing_counter_key(std::string_view name) {
  using topology::key_slot;
  const std::string head = std::string(kFencingCounter) + ":{";
  const std::string redisson = head + std::string(name) + "}";
  const auto slot = key_slot(name);
  if (key_slot(redisson) == slot) return redisson;
  const auto tag = topology::hash_tag(name);
  if (tag.size() != name.size()) {
    // The name has a hash tag of its own: reuse it.
    return head + std::string(tag) + "}:" + std::string(name);
  }
  // The name hashes whole but contains a brace (e.g. "a}b"): find a short tag
  // with the same slot. Deterministic, so every client derives the same key;
  // a match is found within a few tens of thousands of tries.
  for (unsigned i = 0;; ++i) {
    const std::string candidate = std::to_string(i);
    if (key_slot(candidate) == slot) return head + candidate + "}:" + std::string(name);
  }
}

std::string lock_channel(std::string_view name) {
  return prefixed("redisson_lock__channel", name);
}

std::string fair_queue_key(std::string_view name) {
  return same_slot_key(kFairQueue, name);
}

std::string fair_timeout_key(std::string_view name) {
  return same_slot_key(kFairTimeout, name);
}

std::string lock_delay_key(std::string_view name) {
  return same_slot_key(kLockDelay, name);
}

LockDelay::LockDelay(std::string_view name, std::chrono::milliseconds delay) {
  if (delay.count() <= 0) return;
  key = lock_delay_key(name);
  text = std::to_string(delay.count());
}

std::string rw_key_prefix(std::string_view name) {
  if (name.find('{') != std::string_view::npos) return std::string(name);
  return "{" + std::string(name) + "}";
}

std::string rw_timeout_prefix(std::string_view name, std::string_view owner) {
  return rw_key_prefix(name) + ":" + std::string(owner) + ":" + std::string(kReadTimeout);
}

std::string rw_channel(std::string_view name) {
  return prefixed("redisson_rwlock", name);
}

std::string semaphore_holders_key(std::string_view name) {
  return prefixed(kSemaphoreHolders, name);
}

std::string semaphore_counts_key(std::string_view name) {
  return prefixed(kSemaphoreCounts, name);
}

std::string semaphore_v1_leases_key(std::string_view name) {
  return prefixed(kSemaphoreV1Leases, name);
}

std::string semaphore_v1_holders_key(std::string_view name) {
  return prefixed(kSemaphoreV1Holders, name);
}

std::string semaphore_channel(std::string_view name) {
  return prefixed("redisson_sc", name);
}

std::string latch_channel(std::string_view name) {
  return prefixed("redisson_countdownlatch__channel", name);
}

std::string simple_lock_channel(std::string_view name) {
  return prefixed("distlock_simple_lock__channel", name);
}

bool is_auxiliary_key(std::string_view key) {
  for (const std::string_view prefix :
       {kFairQueue, kFairTimeout, kFencingCounter, kSemaphoreHolders, kSemaphoreCounts,
        kSemaphoreV1Leases, kSemaphoreV1Holders, kLockDelay}) {
    if (key.starts_with(prefix) && key.substr(prefix.size()).starts_with(':')) return true;
  }
  const std::string read_timeout = ":" + std::string(kReadTimeout) + ":";
  return key.find(read_timeout) != std::string_view::npos;
}

}  // namespace distlock::sync
