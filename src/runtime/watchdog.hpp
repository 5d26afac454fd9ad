// One watchdog per Client: renews every held watchdog lease in pipelined
// batches, and marks leases lost when their deadline passes unconfirmed.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/lease_state.hpp"
#include "runtime/metrics.hpp"
#include "topology/replica_ack.hpp"

namespace distlock::topology {
class Topology;
}

namespace distlock::runtime {

struct RenewalFailureCounts;

class Watchdog {
 public:
  // At most this many leases go into one renewal script call.
  static constexpr std::size_t kBatch = 1000;

  // Renews through `topology` every `period` (a third of the watchdog lease).
  // With `ack.wanted()`, each renewal call is followed by WAIT, and a
  // renewal counts (extends what the holder believes) only when enough
  // replicas acknowledged it (ClientOptions::min_replicas_acked).
  // Renewals are counted in `metrics` (may be null; must outlive the calls).
  Watchdog(topology::Topology& topology,
           std::chrono::milliseconds period,
           asio::io_context& io,
           topology::ReplicaAck ack = {},
           Metrics* metrics = nullptr);

  // Any thread. Registers a lease before its acquire is sent; it is renewed
  // and deadline-checked only once active.
  void add(const std::shared_ptr<LeaseState>& lease);
  // Any thread. Stops renewing and checking it; a holding ends its hold time.
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

  // Renewal script calls that got no usable answer since the Client started,
  // by cause. Such a call changes no lease; the expiry check marks a lease
  // lost if its deadline passes before a later renewal gets through. For
  // tests: a renewal sent while the server is paused shows up in timed_out.
  // Any thread.
  struct RenewalFailures {
    std::size_t timed_out = 0;        // no reply within command_timeout
    std::size_t connection_lost = 0;  // the connection dropped before the reply
    std::size_t other = 0;            // not queued, an error reply, or a malformed one
    std::size_t not_replicated = 0;   // too few replicas acknowledged (not believed)
  };
  RenewalFailures renewal_failures() const;

 private:
  void arm_tick();
  void tick(bool all);
  void send_batches(std::vector<std::shared_ptr<LeaseState>> leases, bool check_only);
  void send_batch(std::vector<std::shared_ptr<LeaseState>> batch, bool check_only);
  void arm_expiry(Clock::time_point at);
  void check_expiry();

  topology::Topology& topology_;
  const std::chrono::milliseconds period_;
  const topology::ReplicaAck ack_;
  // Shared with the calls in flight, which may complete after the Watchdog
  // is gone (a connection failing its queue as the Client is destroyed).
  const std::shared_ptr<RenewalFailureCounts> failures_;
  mutable std::mutex mutex_;
  std::unordered_map<const LeaseState*, std::shared_ptr<LeaseState>> leases_;
  // I/O thread only.
  asio::steady_timer tick_timer_;
  asio::steady_timer expiry_timer_;
  bool tick_armed_ = false;
  Clock::time_point expiry_at_ = Clock::time_point::max();
  bool closed_ = false;
};

}  // namespace distlock::runtime
