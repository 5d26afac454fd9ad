// The permits one Client holds of one semaphore: one holder id on
// the server per (Client, name) at a time (a Holding of the semaphore's
// PermitPrimitive), with a count, renewed by the watchdog while the count or
// an acquire in flight needs it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "sync/acquire_op.hpp"
#include "sync/holding.hpp"
#include "sync/permit_primitive.hpp"

namespace distlock::sync {

class SemaphoreState : public std::enable_shared_from_this<SemaphoreState> {
 public:
  // The state of `name` for the Client behind `services`, from its
  // SemaphoreRegistry: every Semaphore of that name made by that Client
  // shares it (so any of them, on any thread, releases what another acquired).
  static std::shared_ptr<SemaphoreState> of(std::shared_ptr<Services> services, std::string name);

  // Validates `name` (non-empty, at most 64 KiB); throws Error(invalid_argument).
  SemaphoreState(std::shared_ptr<Services> services, std::string name);

  // Acquires n for the Client: true when acquired, false (ec clear) when the
  // deadline passed. n is validated by the caller.
  bool acquire(std::int64_t n, std::optional<Clock::time_point> deadline, std::error_code& ec);
  // The same acquire without waiting: `done` runs once with its outcome,
  // after the Client's count has booked it. Returns the running op (to
  // cancel it). An attempt that comes back after a cancel gives back what
  // it took, in the background.
  std::shared_ptr<AcquireOp> start_acquire(std::int64_t n,
                                           std::optional<Clock::time_point> deadline,
                                           AcquireOp::Done done);
  // Releases n the Client holds: not_owner (no I/O) when it holds fewer.
  void release(std::int64_t n, std::error_code& ec);
  std::int64_t held() const;

  // An attempt whose acquire had already ended (cancelled while the attempt
  // was in flight) came back: it took n permits on `holder` (`took`), or got
  // no reply and may have. Gives back what it may hold, in the background.
  void undo_late(const std::shared_ptr<Holding>& holder, std::int64_t n, bool took);

  // The Client closed: stops holding (the server ends the lease) and no
  // longer keeps itself alive. Called by the Client's SemaphoreRegistry.
  void close() noexcept;

  const std::shared_ptr<Services> services;
  // The primitive of Permits (each its own holder) and of the Client's
  // shared holder: the same keys, scripts and renewal.
  const std::shared_ptr<const PermitPrimitive> permits;
  const std::shared_ptr<const PermitPrimitive> client_permits;

 private:
  // An acquire in two parts: begin_acquire returns the holder it runs on,
  // counted as pending until end_acquire books its outcome (`uncertain`: an
  // attempt got no reply and may hold permits).
  std::shared_ptr<Holding> begin_acquire();
  void end_acquire(std::int64_t n, bool acquired, bool uncertain);
  // The holder of the Client's permits, made when needed (mutex_ held).
  std::shared_ptr<Holding> episode_locked();
  // Stops renewing the holder; `give_back` also sends a retiring release of
  // whatever it may still hold on the server (mutex_ held).
  void retire_locked(bool give_back);
  // Stops renewing `holder`, as retire_locked, without touching episode_.
  void retire(const std::shared_ptr<Holding>& holder, bool give_back);
  // Releases the last n the Client holds, nothing else in flight, retiring
  // the holder in the same call; `guard` holds mutex_, which is let go
  // during the call and held again on return.
  void release_last(std::int64_t n, std::unique_lock<std::mutex>& guard, std::error_code& ec);
  // Applies that release's outcome to the holder it detached (mutex_ held;
  // episode_ may be a fresh holder by now).
  struct Detached;
  void settle_last_release(std::int64_t n, std::int64_t r, std::error_code& ec, const Detached& d);
  // Applies a release's outcome that is not a plain success (mutex_ held):
  // an unknown one counts the permits released, -1 (lease over) drops all,
  // -2 is not_owner. `episode` is the holder it was sent for.
  void settle_release(std::int64_t n,
                      std::int64_t r,
                      std::error_code& ec,
                      const std::shared_ptr<Holding>& episode);

  // A holder release_last took off episode_ while its retiring call is in
  // flight (it runs without mutex_).
  struct Detached {
    std::shared_ptr<Holding> holder;
    bool uncertain = false;  // uncertain_ when it was detached
    bool late = false;       // an attempt on it came back meanwhile (undo_late)
  };

  mutable std::mutex mutex_;
  std::shared_ptr<Holding> episode_;
  std::vector<Detached> detached_;  // at most a few: one per release_last in flight
  std::int64_t held_ = 0;
  int pending_ = 0;         // acquires in flight on episode_
  int releasing_ = 0;       // releases in flight on episode_ (not retiring it)
  bool uncertain_ = false;  // an acquire or release got no reply
  // Keeps this state (and its count) alive while the holder exists, even
  // when no Semaphore object is left: the permits are the Client's.
  std::shared_ptr<SemaphoreState> self_;
};

}  // namespace distlock::sync
