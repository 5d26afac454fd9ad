// Blocking building blocks shared by Lock and Lease: a blocking acquire, a
// blocking release, and what an unlock reports (starting a PendingRelease
// when the outcome is unknown).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <system_error>

#include "sync/acquire_loop.hpp"
#include "sync/holding.hpp"
#include "sync/holding_step.hpp"
#include "sync/pending_release.hpp"
#include "sync/release_call.hpp"

namespace distlock::sync {

// Runs an AcquireOp and waits for it. Registers a fresh lease (state not yet
// active) with the watchdog first, and removes it again unless acquired.
// `cleanup`, when given, receives the release undoing an attempt that got no
// reply (null otherwise).
AcquireOutcome acquire_blocking(Services& client,
                                const std::shared_ptr<Holding>& state,
                                std::uint32_t count_after,
                                std::optional<Clock::time_point> deadline,
                                std::shared_ptr<PendingRelease>* cleanup = nullptr);
// As above, with the step to run (a primitive's step whose count does not
// fit count_after: a permit holder's n).
AcquireOutcome acquire_blocking(Services& client,
                                const std::shared_ptr<Holding>& state,
                                std::unique_ptr<HoldingStep> step,
                                std::optional<Clock::time_point> deadline,
                                std::shared_ptr<PendingRelease>* cleanup = nullptr);

// Sends one release of `state` expecting `expected` holds before it, and
// waits for its reply: a single attempt. A partial release re-arms the lease
// on the server, so it extends the local deadline from when it was sent. Sets
// ec on failure; timeout and
// connection_lost mean the outcome is unknown (hand it to PendingRelease).
ReleaseResult release_blocking(Services& client,
                               Holding& state,
                               std::uint32_t expected,
                               std::error_code& ec);

// Sends one release of `expected` holds of `state` and ignores its reply:
// for a release that must not be repeated (one that is not idempotent),
// whose unknown outcome the holding's lease settles. Any thread.
void release_detached(std::shared_ptr<Holding> state, std::uint32_t expected);

// What an unlock of `expected` holds reports, given its first attempt's
// result and error: success only when the server released (decremented or
// deleted); lease_lost when it no longer held it, or when its count differs
// from `expected` (the holder's view was wrong, so the hold is not released
// as asked). A timeout or connection_lost starts a PendingRelease, stored in
// `*pending`; after connection_lost the call first waits up to one command
// timeout for it to settle (then `*pending` stays null).
std::error_code finish_release(Services& client,
                               const std::shared_ptr<Holding>& state,
                               std::uint32_t expected,
                               bool valid_before,
                               ReleaseResult result,
                               std::error_code ec,
                               std::shared_ptr<PendingRelease>* pending);

}  // namespace distlock::sync
