// How long a latch waiter goes without re-reading the count when no message
// comes: Latch::kRecheck unless changed. An internal hook, not public API:
// tests set it far beyond their bounds, so that a waiter they see woken can
// only have been woken by the zero-count message. Process-wide; it applies
// to waits started after the change.
#pragma once

#include <chrono>

namespace distlock::sync {

std::chrono::milliseconds latch_recheck() noexcept;
// `every` > 0.
void set_latch_recheck(std::chrono::milliseconds every) noexcept;

}  // namespace distlock::sync
