// What this process has used so far (getrusage): CPU time and context
// switches, read before and after a measured window.
#pragma once

#include <cstdint>

namespace distlock_bench {

// User + system CPU seconds of this process so far.
double cpu_seconds() noexcept;
// Voluntary + involuntary context switches of this process's threads so far.
std::int64_t context_switches() noexcept;
// Voluntary context switches only (ru_nvcsw): a thread that went to sleep,
// typically to wait for a reply or for work. Every thread of this process.
std::int64_t voluntary_context_switches() noexcept;

}  // namespace distlock_bench
