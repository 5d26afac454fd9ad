// A holding as the primitives see it: the generic LeaseState (what the
// watchdog renews and the holder reads) plus the Client services that keep it
// alive and release it, and the primitive it holds.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "runtime/lease_state.hpp"
#include "sync/primitive.hpp"
#include "sync/services.hpp"

namespace distlock::sync {

class Holding : public runtime::LeaseState {
 public:
  // A holding of `primitive` by `owner` (the id on the server), renewed as
  // the primitive says; a fixed `lease`, or the watchdog lease when none.
  Holding(std::shared_ptr<Services> services,
          std::shared_ptr<const Primitive> primitive,
          std::string owner,
          std::optional<std::chrono::milliseconds> lease);

  const std::shared_ptr<Services> services;
  const std::shared_ptr<const Primitive> primitive;
  // What its release publishes, when the primitive names each release
  // (Primitive::release_tag); empty otherwise.
  const std::string release_tag;
};

// Every state behind a Lease is a Holding: the sync layer makes them all.
inline Holding& holding(runtime::LeaseState& state) {
  return static_cast<Holding&>(state);
}
inline std::shared_ptr<Holding> holding(std::shared_ptr<runtime::LeaseState> state) {
  return std::static_pointer_cast<Holding>(std::move(state));
}

}  // namespace distlock::sync
