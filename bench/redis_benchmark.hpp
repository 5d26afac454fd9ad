// Runs redis-benchmark, the reference the benchmark programs in bench/
// compare a distlock Client with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace distlock_bench {

// One redis-benchmark run (with --csv). ok is false when it failed.
struct RbResult {
  bool ok = false;
  double rps = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  std::int64_t requests = 0;
};
// Runs `redis-benchmark -h host -p port -c clients -P pipeline --csv -n N
// <extra>`, choosing N so the run lasts about `seconds` (a short calibration
// run first, starting from `estimate_rps`).
RbResult redis_benchmark(const std::string& binary,
                         const std::string& host,
                         int port,
                         int clients,
                         int pipeline,
                         double seconds,
                         double estimate_rps,
                         const std::string& extra);

// Quotes one shell word.
std::string shell_quote(std::string_view word);

}  // namespace distlock_bench
