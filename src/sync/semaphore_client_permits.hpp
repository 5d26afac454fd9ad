// The permits one Client holds of one semaphore: one holder id on
// the server per (Client, name) at a time, with a count, renewed by the
// watchdog while the count or an acquire in flight needs it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>

#include "sync/semaphore_state.hpp"

namespace distlock::sync {

class SemaphoreState : public std::enable_shared_from_this<SemaphoreState> {
 public:
  // The state of `name` for the Client behind `services`, from its
  // SemaphoreRegistry: every Semaphore of that name made by that Client
  // shares it (so any of them, on any thread, releases what another acquired).
  static std::shared_ptr<SemaphoreState> of(std::shared_ptr<Services> services, std::string name);

  SemaphoreState(std::shared_ptr<Services> services, std::shared_ptr<const SemaphoreKeys> keys);

  // Acquires n for the Client: true when acquired, false (ec clear) when the
  // deadline passed. n is validated by the caller.
  bool acquire(std::int64_t n, std::optional<Clock::time_point> deadline, std::error_code& ec);
  // An acquire in two parts (the async form): begin_acquire returns the
  // holder it runs on, counted as pending until end_acquire books its
  // outcome (`uncertain`: an attempt got no reply and may hold permits).
  std::shared_ptr<PermitHolding> begin_acquire();
  void end_acquire(std::int64_t n, bool acquired, bool uncertain);
  // An attempt whose acquire had already ended (cancelled while the attempt
  // was in flight) came back: it took n permits on `holder` (`took`), or got
  // no reply and may have. Gives back what it may hold, in the background.
  void undo_late(const std::shared_ptr<PermitHolding>& holder, std::int64_t n, bool took);
  // Releases n the Client holds: not_owner (no I/O) when it holds fewer.
  void release(std::int64_t n, std::error_code& ec);
  std::int64_t held() const;

  // The Client closed: stops holding (the server ends the lease) and no
  // longer keeps itself alive. Called by the Client's SemaphoreRegistry.
  void close() noexcept;

  const std::shared_ptr<Services> services;
  const std::shared_ptr<const SemaphoreKeys> keys;

 private:
  // The holder of the Client's permits, made when needed (mutex_ held).
  std::shared_ptr<PermitHolding> episode_locked();
  // Stops renewing the holder; `give_back` also sends a retiring release of
  // whatever it may still hold on the server (mutex_ held).
  void retire_locked(bool give_back);
  // Applies a release's outcome that is not a plain success (mutex_ held):
  // an unknown one counts the permits released, -1 (lease over) drops all,
  // -2 is not_owner. `episode` is the holder it was sent for.
  void settle_release(std::int64_t n,
                      std::int64_t r,
                      std::error_code& ec,
                      const std::shared_ptr<PermitHolding>& episode);

  mutable std::mutex mutex_;
  std::shared_ptr<PermitHolding> episode_;
  std::int64_t held_ = 0;
  int pending_ = 0;         // acquires in flight on episode_
  int releasing_ = 0;       // releases in flight on episode_ (not retiring it)
  bool uncertain_ = false;  // an acquire or release got no reply
  // Keeps this state (and its count) alive while the holder exists, even
  // when no Semaphore object is left: the permits are the Client's.
  std::shared_ptr<SemaphoreState> self_;
};

}  // namespace distlock::sync
