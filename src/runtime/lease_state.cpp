#include "runtime/lease_state.hpp"

namespace distlock::runtime {
namespace {

std::int64_t to_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

Clock::time_point from_ns(std::int64_t ns) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

std::chrono::nanoseconds believed_for(std::chrono::milliseconds ttl, double drift) {
  const auto margin =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::duration<double, std::milli>(static_cast<double>(ttl.count()) * drift)) +
      std::chrono::milliseconds(2);
  return std::chrono::nanoseconds(ttl) - margin;
}

}  // namespace

LeaseState::LeaseState(std::string n,
                       std::string o,
                       std::chrono::milliseconds t,
                       bool w,
                       Renewal r,
                       double drift_factor,
                       const LostHandler* on_lost)
    : name(std::move(n)),
      owner(std::move(o)),
      ttl(t),
      watchdog(w),
      ttl_text(std::to_string(t.count())),
      renewal(std::move(r)),
      believed(believed_for(t, drift_factor)),
      on_lost_(on_lost) {}

void LeaseState::confirm(Clock::time_point sent) noexcept {
  const auto proposed = to_ns(sent + believed);
  auto current = deadline_ns_.load();
  while (proposed > current && !deadline_ns_.compare_exchange_weak(current, proposed)) {
  }
}

Clock::time_point LeaseState::deadline() const noexcept {
  return from_ns(deadline_ns_.load());
}

Clock::time_point LeaseState::last_renewal_sent() const noexcept {
  return from_ns(renewal_sent_ns_.load());
}

void LeaseState::renewal_sent(Clock::time_point t) noexcept {
  renewal_sent_ns_ = to_ns(t);
}

bool LeaseState::mark_lost(LeaseLostEvent::Reason reason) {
  if (lost_.exchange(true)) return false;
  hold_record.lost(reason);  // counted before anyone is told
  stop_.request_stop();
  if (on_lost_ && *on_lost_) {
    try {
      (*on_lost_)(LeaseLostEvent{name, owner, reason});
    } catch (...) {
      // A throwing user callback must not take down the I/O thread.
    }
  }
  return true;
}

void LeaseState::set_deadline(Clock::time_point t) noexcept {
  deadline_ns_ = to_ns(t);
}

void LeaseState::uncertain() {
  if (lost_.load() || released.load()) return;
  set_deadline(Clock::now());
  if (on_lost_ && *on_lost_) {
    try {
      (*on_lost_)(LeaseLostEvent{name, owner, LeaseLostEvent::Reason::suspended});
    } catch (...) {
      // As mark_lost: a throwing user callback must not take down the I/O thread.
    }
  }
}

bool LeaseState::valid() const noexcept {
  return active.load() && !lost_.load() && !released.load() && Clock::now() < deadline();
}

}  // namespace distlock::runtime
