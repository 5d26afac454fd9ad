// Blocking building blocks shared by Lock and Lease.
#pragma once

#include <memory>
#include <optional>

#include "sync/acquire_op.hpp"

namespace distlock::detail {

// Runs an AcquireOp and waits for it. Registers a fresh lease (state not yet
// active) with the watchdog first, and removes it again unless acquired.
AcquireOutcome acquire_blocking(ClientImpl& client,
                                const std::shared_ptr<LeaseState>& state,
                                std::uint32_t count_after,
                                std::optional<Clock::time_point> deadline);

// Result codes of release.lua.
enum class ReleaseResult { not_held = -1, decremented = 0, released = 1, already_applied = 2 };

// Sends one release of `state` expecting `expected` holds before it, and
// waits. A connection lost before the reply is retried once: the script is
// idempotent per call. Sets ec on failure.
ReleaseResult release_blocking(ClientImpl& client,
                               const LeaseState& state,
                               std::uint32_t expected,
                               std::error_code& ec);

// Fire-and-forget release, for the I/O thread, where blocking would deadlock.
void release_detached(ClientImpl& client, const LeaseState& state, std::uint32_t expected);

// A new lease state for `owner` with the given fixed lease, or the watchdog
// lease when none.
std::shared_ptr<LeaseState> make_lease_state(const std::shared_ptr<ClientImpl>& client,
                                             const std::shared_ptr<const LockKeys>& keys,
                                             std::string owner,
                                             std::optional<std::chrono::milliseconds> lease);

}  // namespace distlock::detail
