// The long-hold warning (ClientOptions::long_hold_warning / on_long_hold):
// one timer per Client on the I/O thread, never on the acquire or release
// path.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "distlock/client_options.hpp"
#include "runtime/metrics.hpp"

namespace distlock::runtime {

class LeaseState;

class LongHoldMonitor {
 public:
  using Handler = std::function<void(const LongHoldEvent&)>;

  // Warns through `*handler` (must outlive this; empty or a zero threshold:
  // never) about holdings held `threshold` or longer.
  LongHoldMonitor(asio::io_context& io,
                  std::chrono::milliseconds threshold,
                  const Handler* handler);

  // I/O thread. Watches `lease` from `lease->hold_record.since()`: warns
  // once if it is still held (not released, not lost) `threshold` later.
  // Only a weak reference is kept.
  void watch(const std::shared_ptr<LeaseState>& lease);
  // I/O thread. Cancels the timer; nothing more is reported.
  void close();

 private:
  void arm(std::chrono::steady_clock::time_point at);
  void check();

  const std::chrono::milliseconds threshold_;
  const Handler* const handler_;
  asio::steady_timer timer_;
  std::chrono::steady_clock::time_point armed_at_ = std::chrono::steady_clock::time_point::max();
  std::vector<std::weak_ptr<LeaseState>> watched_;
  bool closed_ = false;
};

// The first acquire of a holding was confirmed (sent at `sent`): its hold
// starts counting in `metrics`, and `long_holds` watches it. I/O thread.
void start_hold(Metrics& metrics,
                LongHoldMonitor& long_holds,
                const std::shared_ptr<LeaseState>& lease,
                MetricPrimitive kind,
                std::chrono::steady_clock::time_point sent);

}  // namespace distlock::runtime
