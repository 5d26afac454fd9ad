#include "runtime/metrics_long_hold.hpp"

#include <algorithm>

#include "runtime/lease_state.hpp"

namespace distlock::runtime {

LongHoldMonitor::LongHoldMonitor(asio::io_context& io,
                                 std::chrono::milliseconds threshold,
                                 const Handler* handler)
    : threshold_(threshold), handler_(handler), timer_(io) {}

void LongHoldMonitor::watch(const std::shared_ptr<LeaseState>& lease) {
  if (closed_ || threshold_.count() <= 0 || !handler_ || !*handler_) return;
  watched_.push_back(lease);
  arm(lease->hold_record.since() + threshold_);
}

void LongHoldMonitor::arm(std::chrono::steady_clock::time_point at) {
  if (closed_ || at >= armed_at_) return;
  armed_at_ = at;
  timer_.expires_at(at);
  timer_.async_wait([this](std::error_code ec) {
    if (ec || closed_) return;  // re-armed earlier, or closed
    armed_at_ = std::chrono::steady_clock::time_point::max();
    check();
  });
}

void LongHoldMonitor::check() {
  const auto now = std::chrono::steady_clock::now();
  auto next = std::chrono::steady_clock::time_point::max();
  std::vector<std::shared_ptr<LeaseState>> due;
  // Released, lost and warned holdings leave the list here: it holds at most
  // the holdings started within one threshold, plus those still held.
  std::erase_if(watched_, [&](const std::weak_ptr<LeaseState>& weak) {
    auto lease = weak.lock();
    if (!lease || lease->released.load() || lease->lost()) return true;
    const auto at = lease->hold_record.since() + threshold_;
    if (at <= now) {
      due.push_back(std::move(lease));
      return true;
    }
    next = std::min(next, at);
    return false;
  });
  if (next != std::chrono::steady_clock::time_point::max()) arm(next);
  for (const auto& lease : due) {
    try {
      (*handler_)(LongHoldEvent{
          lease->name, lease->owner,
          std::chrono::duration_cast<std::chrono::milliseconds>(now - lease->hold_record.since())});
    } catch (...) {
      // A throwing user callback must not take down the I/O thread.
    }
  }
}

void LongHoldMonitor::close() {
  closed_ = true;
  timer_.cancel();
  watched_.clear();
}

void start_hold(Metrics& metrics,
                LongHoldMonitor& long_holds,
                const std::shared_ptr<LeaseState>& lease,
                MetricPrimitive kind,
                std::chrono::steady_clock::time_point sent) {
  lease->hold_record.start(metrics, kind, sent);
  long_holds.watch(lease);
}

}  // namespace distlock::runtime
