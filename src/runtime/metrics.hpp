// The recording side of a Client's metrics (include/distlock/metrics.hpp):
// relaxed atomic counters and fixed-bucket histograms, one set per Client.
// No lock and no allocation per operation; with DISTLOCK_METRICS=0 every
// recording function is an empty inline function.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "distlock/lease.hpp"
#include "distlock/metrics.hpp"

#ifndef DISTLOCK_METRICS
#define DISTLOCK_METRICS 1
#endif

namespace distlock::runtime {

class LongHoldMonitor;
class LeaseState;

class AtomicHistogram {
 public:
  void observe(std::chrono::nanoseconds d) noexcept;
  HistogramSnapshot snapshot() const noexcept;

 private:
  // Not cumulative here (one increment per observation): summed at snapshot.
  std::array<std::atomic<std::uint64_t>, HistogramSnapshot::kBounds.size() + 1> buckets_{};
  std::atomic<std::uint64_t> sum_ns_{0};
};

class Metrics {
 public:
  using Duration = std::chrono::nanoseconds;

  // An acquire that started at `started` finished now; `waited`: it met
  // contention and waited.
  void acquire([[maybe_unused]] MetricPrimitive p,
               [[maybe_unused]] AcquireResult r,
               [[maybe_unused]] bool waited,
               [[maybe_unused]] std::chrono::steady_clock::time_point started) noexcept {
#if DISTLOCK_METRICS
    auto& k = kinds_[static_cast<std::size_t>(p)];
    k.acquires[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);
    if (waited) k.contended.fetch_add(1, std::memory_order_relaxed);
    k.wait.observe(std::chrono::steady_clock::now() - started);
#endif
  }
  void hold_started() noexcept {
#if DISTLOCK_METRICS
    held_now_.fetch_add(1, std::memory_order_relaxed);
#endif
  }
  // A holding stopped being held: released, or lost (then it is observed
  // in the hold histogram only when its holder releases it).
  void hold_left() noexcept {
#if DISTLOCK_METRICS
    held_now_.fetch_sub(1, std::memory_order_relaxed);
#endif
  }
  void hold_ended([[maybe_unused]] MetricPrimitive p, [[maybe_unused]] Duration held) noexcept {
#if DISTLOCK_METRICS
    kinds_[static_cast<std::size_t>(p)].hold.observe(held);
#endif
  }
  void renewals([[maybe_unused]] bool ok, [[maybe_unused]] std::uint64_t n) noexcept {
#if DISTLOCK_METRICS
    (ok ? renewals_ok_ : renewals_failed_).fetch_add(n, std::memory_order_relaxed);
#endif
  }
  void lost([[maybe_unused]] LeaseLostEvent::Reason reason) noexcept {
#if DISTLOCK_METRICS
    // `suspended` is not a loss (LeaseState::uncertain never counts it).
    if (static_cast<std::size_t>(reason) >= lost_.size()) return;
    lost_[static_cast<std::size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
#endif
  }
  // A script call carrying `ops` operations went out.
  void script_call([[maybe_unused]] std::size_t ops) noexcept {
#if DISTLOCK_METRICS
    std::size_t b = 0;
    while (b < BatchSizeSnapshot::kBounds.size() && ops > BatchSizeSnapshot::kBounds[b]) ++b;
    batch_sizes_[b].fetch_add(1, std::memory_order_relaxed);
    batch_ops_.fetch_add(ops, std::memory_order_relaxed);
#endif
  }
  void reconnected() noexcept {
#if DISTLOCK_METRICS
    reconnects_.fetch_add(1, std::memory_order_relaxed);
#endif
  }

  // Everything but client_id and commands_in_flight, which the Client adds.
  // Any thread.
  MetricsSnapshot snapshot() const;

 private:
  struct Kind {
    std::array<std::atomic<std::uint64_t>, kAcquireResults> acquires{};
    std::atomic<std::uint64_t> contended{0};
    AtomicHistogram wait;
    AtomicHistogram hold;
  };
  std::array<Kind, kMetricPrimitives> kinds_{};
  std::atomic<std::uint64_t> renewals_ok_{0};
  std::atomic<std::uint64_t> renewals_failed_{0};
  std::array<std::atomic<std::uint64_t>, 3> lost_{};
  std::atomic<std::uint64_t> reconnects_{0};
  std::atomic<std::int64_t> held_now_{0};
  std::array<std::atomic<std::uint64_t>, BatchSizeSnapshot::kBounds.size() + 1> batch_sizes_{};
  std::atomic<std::uint64_t> batch_ops_{0};
};

// The metrics part of one holding (a member of LeaseState). start() on the
// I/O thread when its first acquire is confirmed, before LeaseState::active
// is set; end() once, by whoever releases it (Watchdog::remove); lost() by
// LeaseState::mark_lost. A holding never started records nothing. It counts
// in the held gauge from start() until the first of end() and lost(): a
// lease lost (a Client closed while holding included) is not held, even while
// its handle still exists.
class HoldRecord {
 public:
  // `since`: when the acquire that made the holding was sent.
  void start(Metrics& sink, MetricPrimitive kind, std::chrono::steady_clock::time_point since) {
    sink_ = &sink;
    kind_ = kind;
    since_ = since;
    sink.hold_started();
  }
  void end() noexcept {
#if DISTLOCK_METRICS
    if (sink_ && !ended_.exchange(true)) {
      leave();
      sink_->hold_ended(kind_, std::chrono::steady_clock::now() - since_);
    }
#endif
  }
  void lost(LeaseLostEvent::Reason reason) noexcept {
    if (sink_) {
      sink_->lost(reason);
      leave();
    }
  }
  // For the long-hold warning (set even when metrics are compiled out).
  std::chrono::steady_clock::time_point since() const noexcept {
    return since_;
  }

 private:
  void leave() noexcept {
    if (!left_.exchange(true)) sink_->hold_left();
  }

  Metrics* sink_ = nullptr;
  MetricPrimitive kind_ = MetricPrimitive::lock;
  std::chrono::steady_clock::time_point since_{};
  std::atomic<bool> ended_{false};
  std::atomic<bool> left_{false};
};

}  // namespace distlock::runtime
