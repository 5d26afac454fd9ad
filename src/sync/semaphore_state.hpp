// The semaphore's parts below its public API: its keys, a holding
// of permits (one holder id on the server with a lease), the acquire step on
// the shared AcquireLoop, and the blocking calls of its three scripts.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "distlock/value.hpp"
#include "runtime/lease_state.hpp"
#include "sync/acquire_step.hpp"
#include "sync/services.hpp"

namespace distlock::sync {

// The keys and channel of semaphore `name` (see semaphore_acquire.lua). All
// share `name`'s slot for names without braces (the Redisson prefix rule).
struct SemaphoreKeys {
  // Validates `name` (non-empty, at most 64 KiB); throws Error(invalid_argument).
  explicit SemaphoreKeys(std::string name);

  std::string name;     // available permits
  std::string leases;   // zset holder -> lease deadline (server ms)
  std::string holders;  // hash holder -> permits held
  std::string channel;  // releases publish the number released here
  std::array<std::string_view, 3> keys() const { return {name, leases, holders}; }
};

// A holder on the server: its id, lease and renewal (watchdog kind 'p').
class PermitHolding final : public runtime::LeaseState {
 public:
  // A fresh holder id from the CSPRNG; a fixed `lease`, or the watchdog's.
  PermitHolding(std::shared_ptr<Services> services,
                std::shared_ptr<const SemaphoreKeys> keys,
                std::optional<std::chrono::milliseconds> lease);

  const std::shared_ptr<Services> services;
  const std::shared_ptr<const SemaphoreKeys> keys;

 private:
  PermitHolding(std::shared_ptr<Services> services,
                std::shared_ptr<const SemaphoreKeys> keys,
                std::optional<std::chrono::milliseconds> lease,
                std::string holder);
};

// semaphore_acquire.lua for `n` permits of `holding`. Contended: waits on the
// channel (Wake::count_in_payload) or until the earliest lease could end.
class SemaphoreStep final : public AcquireStep {
 public:
  SemaphoreStep(std::shared_ptr<PermitHolding> holding, std::int64_t n, bool undo_releases);

  const script::Script& script() const override;
  std::span<const std::string_view> keys() const override { return keys_; }
  std::span<const std::string_view> args() const override { return args_; }
  std::string_view route_key() const override { return holding_->keys->name; }
  Attempt interpret(const Value& reply) const override;
  void acquired(const Attempt& attempt, Clock::time_point sent) override;
  void undo() override;
  std::string_view channel() const override { return holding_->keys->channel; }
  runtime::Wake wake() const override { return runtime::Wake::count_in_payload; }
  std::chrono::milliseconds fallback() const override;
  MetricPrimitive metric() const override { return MetricPrimitive::semaphore; }
  std::chrono::nanoseconds validity() const override { return holding_->believed; }

  // An attempt got no reply (it may have taken the permits).
  bool uncertain() const noexcept { return uncertain_; }

 private:
  const std::shared_ptr<PermitHolding> holding_;
  const std::string n_;
  const bool undo_releases_;
  std::array<std::string_view, 3> keys_;
  std::array<std::string_view, 4> args_;
  bool uncertain_ = false;
};

// Runs one acquire of n for `holding` and waits: true when acquired; false
// with ec clear when the deadline passed. `uncertain` is set when an attempt
// got no reply. The caller registers the holding with the watchdog.
bool acquire_permits(Services& client,
                     const std::shared_ptr<PermitHolding>& holding,
                     std::int64_t n,
                     std::optional<Clock::time_point> deadline,
                     bool undo_releases,
                     bool& uncertain,
                     std::error_code& ec);

// semaphore_release.lua, blocking: n (0 = all) of `holding`'s permits;
// `retire` also gives back any rest and forgets the holder. Returns the
// script's reply (>= 1 given back, -1 not held, -2 holds fewer); ec on error.
std::int64_t release_permits(Services& client,
                             const PermitHolding& holding,
                             std::int64_t n,
                             bool retire,
                             std::error_code& ec);

// Sends semaphore_release.lua retiring `holding` without waiting for it
// (from the I/O thread, or to undo): best effort, the lease ends anyway.
// `n` > 0 gives back only n and keeps the holder (the undo of an attempt
// that is known to have taken n).
void release_in_background(Services& client,
                           std::shared_ptr<PermitHolding> holding,
                           std::int64_t n = 0);

// semaphore_admin.lua, blocking: op 'set', 'add', 'drain' or 'get'.
std::int64_t semaphore_admin(Services& client,
                             const SemaphoreKeys& keys,
                             std::string_view op,
                             std::int64_t value,
                             std::error_code& ec);

}  // namespace distlock::sync
