// One watchdog per Client: renews every held watchdog lease in pipelined
// batches, and marks leases lost when their deadline passes unconfirmed.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/lease_state.hpp"

namespace distlock::detail {

class Watchdog {
 public:
  // At most this many leases go into one renewal script call.
  static constexpr std::size_t kBatch = 1000;

  Watchdog(ClientImpl& client, asio::io_context& io);

  // Any thread. Registers a lease before its acquire is sent; it is renewed
  // and deadline-checked only once active.
  void add(const std::shared_ptr<LeaseState>& lease);
  // Any thread. Stops renewing and checking it.
  void remove(const LeaseState* lease);
  // I/O thread. The lease's acquire was confirmed: start the timers.
  void activated(const LeaseState& lease);
  // I/O thread. Renew every watchdog lease now and check that every fixed
  // lease is still held (after a reconnect: a restarted server may have lost
  // them all).
  void renew_all_now();
  // I/O thread. Marks every lease lost (client_closed), cancels the timers.
  void close();
  // Leases registered (for tests: zero once everything is released).
  std::size_t size() const;

 private:
  void arm_tick();
  void tick(bool all);
  void send_batches(std::vector<std::shared_ptr<LeaseState>> leases, bool check_only);
  void send_batch(std::vector<std::shared_ptr<LeaseState>> batch, bool check_only);
  void arm_expiry(Clock::time_point at);
  void check_expiry();

  ClientImpl& client_;
  const std::chrono::milliseconds period_;
  mutable std::mutex mutex_;
  std::unordered_map<const LeaseState*, std::shared_ptr<LeaseState>> leases_;
  // I/O thread only.
  asio::steady_timer tick_timer_;
  asio::steady_timer expiry_timer_;
  bool tick_armed_ = false;
  Clock::time_point expiry_at_ = Clock::time_point::max();
  bool closed_ = false;
};

}  // namespace distlock::detail
