#include "latency.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>

namespace distlock_bench {

std::int64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

namespace {

double at(const std::vector<std::int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  // Nearest rank: the smallest sample with at least q of the samples at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  const std::size_t i = rank == 0 ? 0 : std::min(rank - 1, sorted.size() - 1);
  return static_cast<double>(sorted[i]) / 1000.0;
}

}  // namespace

Latency summarize(std::vector<std::int64_t>& ns) {
  Latency l;
  l.samples = ns.size();
  if (ns.empty()) return l;
  std::sort(ns.begin(), ns.end());
  l.p50_us = at(ns, 0.50);
  l.p99_us = at(ns, 0.99);
  l.p999_us = at(ns, 0.999);
  l.max_us = static_cast<double>(ns.back()) / 1000.0;
  double sum = 0;
  for (const auto v : ns) sum += static_cast<double>(v);
  l.mean_us = sum / static_cast<double>(ns.size()) / 1000.0;
  return l;
}

void add_latency(JsonLine& line, std::string_view prefix, const Latency& l) {
  const std::string p(prefix);
  line.add(p + "_p50_us", l.p50_us)
      .add(p + "_p99_us", l.p99_us)
      .add(p + "_p999_us", l.p999_us)
      .add(p + "_max_us", l.max_us)
      .add(p + "_mean_us", l.mean_us);
}

}  // namespace distlock_bench
