// Latency recording in the benchmark programs in bench/: timestamps and the
// percentiles of the samples.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "json_line.hpp"

namespace distlock_bench {

using Clock = std::chrono::steady_clock;

// Nanoseconds on CLOCK_MONOTONIC (steady_clock on Linux), comparable across
// processes of one machine.
std::int64_t now_ns() noexcept;

// Latency percentiles in microseconds of samples given in nanoseconds.
struct Latency {
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
  double mean_us = 0;
  std::size_t samples = 0;
};
// Sorts `ns` in place.
Latency summarize(std::vector<std::int64_t>& ns);
void add_latency(JsonLine& line, std::string_view prefix, const Latency& l);

}  // namespace distlock_bench
