#include "runtime/metrics.hpp"

#include <algorithm>

namespace distlock {

std::string_view to_string(MetricPrimitive p) noexcept {
  static constexpr std::array<std::string_view, kMetricPrimitives> kNames = {
      "lock",      "fair_lock", "read_lock",    "write_lock", "simple_lock",
      "semaphore", "latch",     "rate_limiter", "redlock"};
  return kNames[static_cast<std::size_t>(p)];
}

std::string_view to_string(AcquireResult r) noexcept {
  static constexpr std::array<std::string_view, kAcquireResults> kNames = {
      "acquired", "not_acquired", "failed", "cancelled"};
  return kNames[static_cast<std::size_t>(r)];
}

namespace runtime {
namespace {

// The bucket bounds in integer nanoseconds, so observing needs no floating
// point: a duration lands in the first bucket whose bound it does not exceed.
constexpr auto kBoundsNs = [] {
  std::array<std::int64_t, HistogramSnapshot::kBounds.size()> ns{};
  for (std::size_t i = 0; i < ns.size(); ++i) {
    ns[i] = static_cast<std::int64_t>(HistogramSnapshot::kBounds[i] * 1e9 + 0.5);
  }
  return ns;
}();

}  // namespace

void AtomicHistogram::observe(std::chrono::nanoseconds d) noexcept {
  const std::int64_t ns = std::max<std::int64_t>(d.count(), 0);
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(kBoundsNs.begin(), kBoundsNs.end(), ns) - kBoundsNs.begin());
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<std::uint64_t>(ns), std::memory_order_relaxed);
}

HistogramSnapshot AtomicHistogram::snapshot() const noexcept {
  HistogramSnapshot h;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    h.buckets[i] = running;
  }
  // count is the +Inf bucket by construction, even while others record.
  h.count = running;
  h.sum = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
  return h;
}

MetricsSnapshot Metrics::snapshot() const {
  MetricsSnapshot s;
  s.enabled = DISTLOCK_METRICS != 0;
  for (std::size_t p = 0; p < kMetricPrimitives; ++p) {
    const Kind& k = kinds_[p];
    PrimitiveMetrics& out = s.primitives[p];
    for (std::size_t r = 0; r < kAcquireResults; ++r) {
      out.acquires[r] = k.acquires[r].load(std::memory_order_relaxed);
    }
    out.contended = k.contended.load(std::memory_order_relaxed);
    out.wait = k.wait.snapshot();
    out.hold = k.hold.snapshot();
  }
  s.renewals_ok = renewals_ok_.load(std::memory_order_relaxed);
  s.renewals_failed = renewals_failed_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < lost_.size(); ++i) {
    s.leases_lost[i] = lost_[i].load(std::memory_order_relaxed);
  }
  s.reconnects = reconnects_.load(std::memory_order_relaxed);
  s.held_now = held_now_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace runtime
}  // namespace distlock
