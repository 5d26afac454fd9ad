// The semaphore's permits as a Primitive: a holder (its own id on the
// server, not reentrant) takes n permits with semaphore_acquire.lua, keeps
// them under a lease in the zset `holders` (renewed as Renewal::Kind::
// permit_holder), and gives them back with semaphore_release.lua
// (docs/semaphore.md). A Permit's holder is a Lease of it; the Client's
// shared holder (SemaphoreState) is a Holding of it too.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "sync/primitive.hpp"

namespace distlock::sync {

class PermitPrimitive final : public Primitive {
 public:
  // Whose holder a holding of it is, which decides what a release of
  // `expected` (release_args) gives back.
  enum class Holder {
    // A Permit's own: every release gives back all it holds and retires it
    // (idempotent, so a release may be repeated until the server answers).
    permit,
    // The Client's shared one: a release gives back `expected` permits and
    // keeps the holder; 0 gives back all it holds and retires it.
    client,
  };

  // Validates `name` (non-empty, at most 64 KiB); throws Error(invalid_argument).
  PermitPrimitive(std::string name, Holder holder);

  const std::string& name = Primitive::name();  // the available permits
  const std::string holders;                    // zset holder -> lease deadline (server ms)
  const std::string counts;                     // hash holder -> permits held, when not 1
  // The earlier layout's zset and hash: its expired holders are reclaimed.
  const std::string v1_leases;
  const std::string v1_holders;
  const std::string channel;  // releases publish the number released here
  const Holder holder;

  std::string_view route_key() const override { return name; }
  std::string_view kind() const override { return "permit"; }
  MetricPrimitive metric() const override { return MetricPrimitive::semaphore; }
  bool reentrant() const override { return false; }
  // A step taking `count_after` permits for a fresh holder.
  std::unique_ptr<HoldingStep> acquire_step(Services& client,
                                            std::shared_ptr<Holding> state,
                                            std::uint32_t count_after) const override;
  runtime::Renewal renewal(const std::string& owner) const override;
  const script::Script& release_script() const override;
  void release_args(const Holding& state,
                    std::string_view expected,
                    ReleaseArgs& out) const override;
  // semaphore_release.lua answers the number given back (>= 1: released),
  // -1 (not held) or -2 (holds fewer than asked: a count mismatch).
  Value release_reply(Value reply) const override;

  // What a release of `expected` sends as semaphore_release.lua's n ("0":
  // all) and retire flag ("1": retire the holder), as `holder` decides.
  std::pair<std::string_view, std::string_view> release_count(std::string_view expected) const;
  // The KEYS of semaphore_release.lua (the name, holders, counts).
  void keys(ReleaseArgs& out) const;
  // The KEYS of semaphore_acquire.lua and semaphore_admin.lua: those and
  // the earlier layout's two keys.
  std::array<std::string_view, 5> reclaim_keys() const {
    return {name, holders, counts, v1_leases, v1_holders};
  }
  // semaphore_release.lua, blocking: gives back n (0 = all) of `state`'s
  // permits; `retire` also gives back any rest and forgets the holder.
  // Returns the script's own reply (>= 1 given back, -1 not held, -2 holds
  // fewer); ec on error.
  std::int64_t give_back(Services& client,
                         const Holding& state,
                         std::int64_t n,
                         bool retire,
                         std::error_code& ec) const;
  // semaphore_admin.lua, blocking: op 'set', 'add', 'drain' or 'get'.
  std::int64_t admin(Services& client,
                     std::string_view op,
                     std::int64_t value,
                     std::error_code& ec) const;
};

}  // namespace distlock::sync
