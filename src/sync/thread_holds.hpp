// The holds every lock-like primitive shares, written once: a thread's
// reentrant holds (keyed by Client, kind and name, with their pending
// releases) and handle-owned Leases. A primitive supplies only its
// Primitive (steps, scripts); Lock, FairLock, the read-write lock's two sides
// and SimpleLock all hold through these functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "distlock/lease.hpp"
#include "sync/acquire_loop.hpp"

namespace distlock::sync {

class Holding;
class Primitive;
struct Services;

using std::chrono::milliseconds;

// The calling thread acquires `primitive` (a re-entry when it holds it and
// the primitive is reentrant): `wait` nullopt waits as long as it takes,
// zero tries once; `lease` nullopt is the watchdog lease. A pending release
// of the thread's earlier hold is settled first. Refuses with
// invalid_argument, sending nothing, a non-reentrant primitive held by the
// thread when `wait` is nullopt (it would wait for itself; a try returns
// not acquired), and a primitive whose refused_over() kind the thread holds
// without holding this one. Never throws.
AcquireOutcome acquire_for_thread(const std::shared_ptr<Services>& client,
                                  const std::shared_ptr<const Primitive>& primitive,
                                  std::optional<milliseconds> wait,
                                  std::optional<milliseconds> lease);

// Releases one hold of the calling thread: success only when the server
// released it; not_owner when the thread holds none; lease_lost when its
// lease was lost; timeout / connection_lost when no reply came (the release
// stays pending and is re-sent; see Lock::unlock(ec)).
std::error_code unlock_for_thread(Services& client, const Primitive& primitive) noexcept;

// The calling thread's holding of `primitive`, null when it holds none.
std::shared_ptr<Holding> thread_holding(const Services& client, const Primitive& primitive);
// The calling thread's local hold count of `primitive` (0 when none).
std::uint32_t thread_count(const Services& client, const Primitive& primitive);

// A handle-owned holding with its own random owner: nullopt when not
// acquired (ec set on failure, with `message` naming the problem).
std::optional<Lease> acquire_lease(const std::shared_ptr<Services>& client,
                                   const std::shared_ptr<const Primitive>& primitive,
                                   std::optional<milliseconds> wait,
                                   std::optional<milliseconds> lease,
                                   std::error_code& ec,
                                   std::string& message);

}  // namespace distlock::sync
