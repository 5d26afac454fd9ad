// How long a SimpleLock waiter sleeps at most between attempts when no
// unlock message comes: SimpleLock::kPollCap unless changed. An internal
// hook, not public API: tests set it far beyond their bounds, so that a
// waiter they see woken by a distlock unlock can only have been woken by the
// unlock's message. Process-wide; it applies to SimpleLock handles made
// after the change.
#pragma once

#include <chrono>

namespace distlock::sync {

std::chrono::milliseconds simple_lock_poll_cap() noexcept;
// `cap` > 0.
void set_simple_lock_poll_cap(std::chrono::milliseconds cap) noexcept;

}  // namespace distlock::sync
