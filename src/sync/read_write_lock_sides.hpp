// The read-write lock's two sides as Primitives on one name, in Redisson's
// RReadWriteLock layout (docs/read_write_lock.md): the hash `name` with
// 'mode' = "read" | "write", a writer's field "<owner>:write" -> count, a
// reader's field "<owner>" -> count, one timeout key per read hold
// "{name}:<owner>:rwlock_timeout:<n>" carrying that hold's lease, and the
// channel "redisson_rwlock:{name}" for both sides' unlocks.
#pragma once

#include <chrono>
#include <string>

#include "sync/key_layout.hpp"
#include "sync/primitive.hpp"

namespace distlock::sync {

// What both sides share: the keys and channel of one read-write lock.
struct ReadWriteNames {
  explicit ReadWriteNames(const std::string& name);
  // "{name}", or the name itself when it has a '{' (Redisson's suffixName):
  // every timeout key starts with it and shares the hash's slot.
  std::string key_prefix;
  std::string channel;  // redisson_rwlock:{name}
};

// The shared side: kind "read", reentrant, owner = the holder's base id. Each
// read hold has its own lease (its timeout key); the last reader's release
// deletes the hash and wakes a writer. A writer's own thread may read too.
class ReadSide final : public Primitive {
 public:
  // Validates `name`; throws Error(invalid_argument).
  // `lock_delay`: the handle's (0: none); with one, read acquires honour the
  // write side's marker.
  explicit ReadSide(std::string name,
                    std::chrono::milliseconds lock_delay = std::chrono::milliseconds(0));

  const ReadWriteNames names;
  const LockDelay delay;  // with one, read acquires honour the write side's marker

  std::string_view route_key() const override { return name(); }
  std::string_view kind() const override { return "read"; }
  MetricPrimitive metric() const override { return MetricPrimitive::read_lock; }
  // The prefix of `owner`'s timeout keys: "{name}:<owner>:rwlock_timeout".
  std::string timeout_prefix(const std::string& owner) const;

  std::unique_ptr<HoldingStep> acquire_step(Services& client,
                                            std::shared_ptr<Holding> state,
                                            std::uint32_t count_after) const override;
  runtime::Renewal renewal(const std::string& owner) const override;
  const script::Script& release_script() const override;
  void release_args(const Holding& state,
                    std::string_view expected,
                    ReleaseArgs& out) const override;
  // Read-held by anyone: mode "read", or a writer that also reads.
  bool query_locked(const Services& client, std::error_code& ec, std::string& what) const override;
  // The hash's PTTL while read-held; nullopt otherwise.
  std::optional<std::chrono::milliseconds> query_ttl(const Services& client,
                                                     std::error_code& ec,
                                                     std::string& what) const override;

 protected:
  std::string_view unlock_channel() const override { return names.channel; }
  std::string_view delay_marker() const override { return delay.key; }
};

// The exclusive side: kind "write", reentrant, refused over a read-only hold
// of the same thread (the upgrade that would wait for itself), owner
// "<base>:write", optionally fenced (the fencing counter of the name, as
// fenced_lock's).
class WriteSide final : public Primitive {
 public:
  // Validates `name`; throws Error(invalid_argument).
  // `lock_delay`: LockOptions::lock_delay, checked (0: none).
  WriteSide(std::string name,
            bool fenced,
            std::chrono::milliseconds lock_delay = std::chrono::milliseconds(0));

  const ReadWriteNames names;
  std::string fence;      // empty unless fenced
  const LockDelay delay;  // LockOptions::lock_delay: its marker and text, or none

  std::string_view route_key() const override { return name(); }
  std::string_view kind() const override { return "write"; }
  MetricPrimitive metric() const override { return MetricPrimitive::write_lock; }
  std::string_view refused_over() const override { return "read"; }
  bool fenced() const override { return !fence.empty(); }
  std::string owner_for(std::string base) const override { return base + ":write"; }

  std::unique_ptr<HoldingStep> acquire_step(Services& client,
                                            std::shared_ptr<Holding> state,
                                            std::uint32_t count_after) const override;
  runtime::Renewal renewal(const std::string& owner) const override;
  const script::Script& release_script() const override;
  void release_args(const Holding& state,
                    std::string_view expected,
                    ReleaseArgs& out) const override;
  // Write-held by anyone (mode "write").
  bool query_locked(const Services& client, std::error_code& ec, std::string& what) const override;
  // The hash's PTTL while write-held; nullopt otherwise.
  std::optional<std::chrono::milliseconds> query_ttl(const Services& client,
                                                     std::error_code& ec,
                                                     std::string& what) const override;

 protected:
  std::string_view unlock_channel() const override { return names.channel; }
  std::string_view delay_marker() const override { return delay.key; }
};

}  // namespace distlock::sync
