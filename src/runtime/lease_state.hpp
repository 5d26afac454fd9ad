// The state of one holding, whatever primitive made it: shared by the Lease or
// thread hold that owns it, the watchdog that renews it, and the acquire that
// made it. It knows nothing of the primitive or the Client (Holding, in sync/,
// adds those).
#pragma once

#include <asio/any_io_executor.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>

#include "distlock/lease.hpp"
#include "runtime/metrics.hpp"

namespace distlock::runtime {

using Clock = std::chrono::steady_clock;

// How the watchdog renews (or checks) a holding, whatever primitive made it.
// A primitive's Primitive::renewal() (or its acquire step) picks the kind
// that matches its holding's layout on the server; the watchdog passes the
// kind through unread. A kind names a layout, not a primitive: a new
// primitive whose holding is a hash of owner -> count uses hash_field (or
// rw_hold when each hold also has its own timeout key, as a read hold does),
// one whose holders have lease deadlines in a zset uses permit_holder, with
// no edit to the watchdog or renew.lua.
//
// The kinds stay an enum because holdings of every primitive share one
// renew.lua call per node (the batch): the script must be told, per holding,
// which check to run, and a script per primitive would split the batches. So
// only a new layout adds a kind, and with it a branch in renew.lua.
struct Renewal {
  enum class Kind : char {
    hash_field = 'h',    // `member` is a field of the hash `key` (a lock's owner)
    string_value = 's',  // `key` holds the string `member` (a SET NX lock's token)
    // `member` waits in the zset `key` (a fair lock waiter's place): renewing
    // moves its liveness deadline to the server's TIME + the lease, and keeps
    // the zset and the queue `key2` alive at least that long.
    queue_place = 'q',
    // A read-write lock's hold: `member` is a field of the hash `key`; a read
    // hold's `key2` is its timeout-key prefix (renew.lua's 'r' branch).
    rw_hold = 'r',
    // A semaphore holder: `member` has a lease deadline in the
    // zset `key`; renewing moves it to the server's TIME + the lease.
    permit_holder = 'p',
    // As hash_field and string_value, for a holder with a lock-delay: `key2`
    // is its marker, kept its delay longer than the lease.
    hash_field_delayed = 'H',
    string_value_delayed = 'S',
    // A read-write lock's write hold with a lock-delay: `key2` is its marker.
    rw_write_delayed = 'W',
  };
  Kind kind = Kind::hash_field;
  std::string key;
  std::string member;
  // A second key the kind's branch reads or extends, in `key`'s slot; empty
  // when the kind uses one key.
  std::string key2;
};

class LeaseState {
 public:
  using LostHandler = std::function<void(const LeaseLostEvent&)>;

  // A holding of `name` by `owner`, renewed as `renewal` says. The local
  // deadline keeps a margin of drift_factor * ttl + 2 ms below the server's
  // expiry. `on_lost` (may be null or empty) runs when it is marked lost; it
  // must outlive this state.
  LeaseState(std::string name,
             std::string owner,
             std::chrono::milliseconds ttl,
             bool watchdog,
             Renewal renewal,
             double drift_factor,
             const LostHandler* on_lost);
  virtual ~LeaseState() = default;
  LeaseState(const LeaseState&) = delete;
  LeaseState& operator=(const LeaseState&) = delete;

  const std::string name;  // the primitive's name, as its user gave it
  const std::string owner;
  const std::chrono::milliseconds ttl;  // the lease length used on the server
  const bool watchdog;                  // renewed by the watchdog
  const std::string ttl_text;           // ttl in ms, for script arguments
  const Renewal renewal;
  // ttl less the clock-drift margin (ClientOptions::clock_drift_factor): how
  // long after a confirming request was sent the holder believes it valid.
  const std::chrono::nanoseconds believed;

  // Set once the first acquire is confirmed; until then the watchdog skips it.
  std::atomic<bool> active{false};
  // Set when release starts: the watchdog stops renewing it.
  std::atomic<bool> released{false};
  std::optional<std::uint64_t> fencing_token;  // written before `active`
  HoldRecord hold_record;                      // metrics: started before `active`

  // Extends the deadline to sent + believed (never shortens it). `sent` is
  // when the acquire or renewal that confirmed the lease was sent.
  void confirm(Clock::time_point sent) noexcept;
  Clock::time_point deadline() const noexcept;
  Clock::time_point last_renewal_sent() const noexcept;
  void renewal_sent(Clock::time_point t) noexcept;

  // Marks the lease lost (first call only): requests the stop token and runs
  // the on_lost handler. Returns true when this call marked it.
  bool mark_lost(LeaseLostEvent::Reason reason);
  // A holding whose lease is not a TTL (a ZooKeeper session): moves the
  // deadline to `t`, earlier or later (confirm() only extends it).
  void set_deadline(Clock::time_point t) noexcept;
  // The holding became uncertain (ZooKeeper: the connection dropped): ends
  // its validity now and tells the on_lost handler with Reason::suspended,
  // unless it is lost or released already. Not a loss: the stop token stays,
  // nothing is counted, and set_deadline() may make it valid again.
  void uncertain();
  bool lost() const noexcept { return lost_.load(); }
  // A holding of a backend other than Redis (backend/) releases itself:
  // foreign() is true and Lease calls the two members below instead of the
  // Redis release path. Redis holdings (sync::Holding) keep the defaults.
  virtual bool foreign() const noexcept { return false; }
  // As Lease::release(ec): idempotent, never throws.
  virtual void release_foreign(std::error_code& ec) noexcept { ec.clear(); }
  // As Lease::async_release: `done` runs once on the backend's I/O thread.
  virtual void release_foreign_async(std::function<void(std::error_code)> done) noexcept {
    done({});
  }
  // Where that completion runs (the Client's I/O executor).
  virtual asio::any_io_executor foreign_executor() const { return {}; }
  bool valid() const noexcept;
  std::stop_token stop_token() const noexcept { return stop_.get_token(); }

 private:
  std::atomic<std::int64_t> deadline_ns_{0};
  std::atomic<std::int64_t> renewal_sent_ns_{0};
  std::atomic<bool> lost_{false};
  std::stop_source stop_;
  const LostHandler* const on_lost_;
};

}  // namespace distlock::runtime
