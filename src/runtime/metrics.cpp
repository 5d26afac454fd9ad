#include "runtime/metrics.hpp"

#include <algorithm>

namespace distlock {

// A switch rather than a table: a MetricPrimitive value without its label
// fails the build (-Wswitch) instead of rendering an empty label.
std::string_view to_string(MetricPrimitive p) noexcept {
  switch (p) {
    case MetricPrimitive::lock:
      return "lock";
    case MetricPrimitive::fair_lock:
      return "fair_lock";
    case MetricPrimitive::read_lock:
      return "read_lock";
    case MetricPrimitive::write_lock:
      return "write_lock";
    case MetricPrimitive::simple_lock:
      return "simple_lock";
    case MetricPrimitive::semaphore:
      return "semaphore";
    case MetricPrimitive::latch:
      return "latch";
    case MetricPrimitive::rate_limiter:
      return "rate_limiter";
    case MetricPrimitive::redlock:
      return "redlock";
  }
  return "unknown";
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
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < batch_sizes_.size(); ++i) {
    running += batch_sizes_[i].load(std::memory_order_relaxed);
    s.script_batches.buckets[i] = running;
  }
  s.script_batches.count = running;
  s.script_batches.sum = batch_ops_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace runtime
}  // namespace distlock
