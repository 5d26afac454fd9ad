/// \file
/// Metrics of one Client: what its primitives did, as plain data,
/// and their rendering in the Prometheus text exposition format (0.0.4).
///
/// Recording costs a few relaxed atomic increments per operation (no lock, no
/// allocation). Building with -DDISTLOCK_METRICS=OFF compiles the recording
/// out: every counter then reads 0 and MetricsSnapshot::enabled is false.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace distlock {

class Client;

/// The primitive an acquire or a hold belongs to (label `primitive`). A
/// MultiLock counts as the locks it takes; a Redlock is not counted.
enum class MetricPrimitive : std::uint8_t {
  lock,          ///< Lock (thread-owned and Lease)
  fair_lock,     ///< FairLock
  read_lock,     ///< ReadWriteLock, read side
  write_lock,    ///< ReadWriteLock, write side
  simple_lock,   ///< SimpleLock (SET NX)
  semaphore,     ///< Semaphore: acquire() and acquire_permit()
  latch,         ///< Latch: waiting for it to open
  rate_limiter,  ///< RateLimiter: acquiring tokens
  redlock,       ///< RedlockLock (in RedlockGroup::metrics(), never a Client's)
};
/// How many MetricPrimitive values there are.
inline constexpr std::size_t kMetricPrimitives = 9;

/// How an acquire ended (label `outcome`).
enum class AcquireResult : std::uint8_t {
  acquired,      ///< it was acquired
  not_acquired,  ///< the wait (or the single try) ended without it: no error
  failed,        ///< an error: server error, timeout, connection lost, closed
  cancelled,     ///< an async acquire cancelled by its caller
};
/// How many AcquireResult values there are.
inline constexpr std::size_t kAcquireResults = 4;

///@{
/// The label value of each ("lock", "fair_lock", ..., "acquired", ...).
std::string_view to_string(MetricPrimitive p) noexcept;
std::string_view to_string(AcquireResult r) noexcept;
///@}

/// A histogram of durations in seconds, Prometheus style.
struct HistogramSnapshot {
  /// Upper bounds of the buckets, in seconds (+Inf follows implicitly).
  static constexpr std::array<double, 17> kBounds = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
  ///@{
  /// Cumulative: buckets[i] counts observations <= kBounds[i]; the last entry
  /// is the +Inf bucket and equals count.
  std::array<std::uint64_t, kBounds.size() + 1> buckets{};
  std::uint64_t count = 0;
  double sum = 0;  ///< seconds
  ///@}
};

/// How many operations each script call carried (coalescing,
/// ClientOptions::coalesce), Prometheus style.
struct BatchSizeSnapshot {
  /// Upper bounds of the buckets, in operations per call (+Inf follows).
  static constexpr std::array<std::uint64_t, 9> kBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  ///@{
  /// Cumulative: buckets[i] counts calls of <= kBounds[i] operations; the
  /// last entry is the +Inf bucket and equals count.
  std::array<std::uint64_t, kBounds.size() + 1> buckets{};
  std::uint64_t count = 0;  ///< script calls sent
  std::uint64_t sum = 0;    ///< operations they carried
  ///@}
};

/// One primitive's part of a MetricsSnapshot.
struct PrimitiveMetrics {
  /// Acquires that finished, by AcquireResult.
  std::array<std::uint64_t, kAcquireResults> acquires{};
  /// Acquires that found it taken and waited (whatever their outcome; a
  /// try that fails at once did not wait).
  std::uint64_t contended = 0;
  /// From the call to its outcome, for every acquire counted above.
  HistogramSnapshot wait;
  /// From the first acquire of a holding to its release (thread holds and
  /// Leases of the lock kinds, semaphore Permits); a lost lease counts when
  /// its holder releases it.
  HistogramSnapshot hold;

  /// acquires[r]: how many acquires ended with `r`.
  std::uint64_t acquires_of(AcquireResult r) const noexcept {
    return acquires[static_cast<std::size_t>(r)];
  }
};

/// A Client's metrics at one moment. Counters only grow over the Client's life;
/// the two gauges go up and down. Plain data: copy it, compare it, render it.
struct MetricsSnapshot {
  bool enabled = true;    ///< false when built with DISTLOCK_METRICS=OFF
  std::string client_id;  ///< Client::id()
  /// Per primitive, indexed by MetricPrimitive (see of()).
  std::array<PrimitiveMetrics, kMetricPrimitives> primitives{};
  ///@{
  /// Watchdog renewals, one per lease per renewal call: ok = extended;
  /// failed = the call got no usable reply, too few replicas acknowledged,
  /// or the lease was found gone (then it is also lost).
  std::uint64_t renewals_ok = 0;
  std::uint64_t renewals_failed = 0;
  ///@}
  /// Leases lost, by LeaseLostEvent::Reason (expired, taken, client_closed),
  /// of the holdings counted in `hold` (not Redlock's).
  std::array<std::uint64_t, 3> leases_lost{};
  /// Reconnects of the data connection(s) after a connection was lost.
  std::uint64_t reconnects = 0;
  /// The script calls of the Client's operations (acquires, releases,
  /// rate-limiter decisions, ...; not watchdog renewals) and how many
  /// operations each carried: a call of n > 1 is a coalesced batch.
  /// sum / count is the mean batch size; count < sum means calls were saved.
  BatchSizeSnapshot script_batches;
  /// Gauge: commands queued or awaiting their reply on the data connection
  /// (the standalone or Sentinel master's; under Cluster, summed over the
  /// masters).
  std::uint64_t commands_in_flight = 0;
  /// Gauge: holdings held now: acquired and neither released nor lost.
  std::int64_t held_now = 0;

  /// primitives[p].
  const PrimitiveMetrics& of(MetricPrimitive p) const noexcept {
    return primitives[static_cast<std::size_t>(p)];
  }
};

/// How prometheus_text() labels what it renders.
struct PrometheusOptions {
  /// Adds client="<Client id>" to every sample.
  bool client_id_label = false;
  /// Constant labels added to every sample. Names must match
  /// [a-zA-Z_][a-zA-Z0-9_]* and not start with "__"; values are escaped.
  std::vector<std::pair<std::string, std::string>> labels;
};

/// The Prometheus text exposition format 0.0.4 (Content-Type
/// "text/plain; version=0.0.4"): families distlock_acquires_total,
/// distlock_acquires_contended_total, distlock_acquire_wait_seconds,
/// distlock_hold_seconds, distlock_renewals_total, distlock_leases_lost_total,
/// distlock_reconnects_total, distlock_script_batch_size,
/// distlock_commands_in_flight, distlock_held
/// (docs/monitoring.md), each with HELP and TYPE lines. Throws
/// Error(errc::invalid_argument) for a bad constant label name. Any thread.
std::string prometheus_text(const MetricsSnapshot& snapshot, const PrometheusOptions& options = {});
/// Of client.metrics(). Any thread; never blocks on I/O.
std::string prometheus_text(const Client& client, const PrometheusOptions& options = {});

}  // namespace distlock
