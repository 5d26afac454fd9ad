/// \file
/// Per-lock options: Client::lock(name, LockOptions) and its siblings.
#pragma once

#include <chrono>

namespace distlock {

/// Options of one lock handle, given to a lock factory with the name
/// (Client::lock, fenced_lock, fair_lock, fenced_fair_lock, simple_lock,
/// fenced_simple_lock, read_write_lock, fenced_read_write_lock).
struct LockOptions {
  /// Lock-delay (as Chubby's and Consul's): when a holding of this handle
  /// ends without a release (its process died or paused past its lease), no
  /// one may take the lock for this long after the lease ended, on the
  /// server's clock, so a holder that was only paused has time to notice its
  /// loss (its stop_token, on_lease_lost) before a successor acts. A release,
  /// a partial unlock and force_unlock() never arm it; force_unlock() of a
  /// handle with a delay ends one that runs. Handles with a delay see the
  /// lock as held for the rest of the delay (try_lock() is false, lock()
  /// waits it out); a handle without one neither reads nor sets the delay, so
  /// give every handle of a name the same options. For a read-write lock the
  /// delay is the write side's; its read acquires honour it.
  /// 0 (the default) = off. Must be at least 0 and under 24 hours, or the
  /// factory throws Error(invalid_argument). See docs/lock.md, "Lock-delay".
  std::chrono::milliseconds lock_delay{0};
};

}  // namespace distlock
