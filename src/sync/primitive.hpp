// What one primitive on one name is to the shared machinery: how to acquire
// it (an AcquireStep), how a holding of it is renewed and released, and how
// its state on the server is read. A Lock handle, a Holding and the thread
// holds all refer to it; it is immutable, so they share it freely.
//
// Adding a lock-like primitive (fair lock, a read-write lock's two sides,
// the SET NX lock) is one subclass plus its Lua scripts: the acquire loop,
// the thread holds, Lease, the pending releases, the watchdog and the async
// API are written once and work for all of them (thread_holds.hpp).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "distlock/metrics.hpp"
#include "distlock/value.hpp"
#include "runtime/lease_state.hpp"

namespace distlock::script {
struct Script;
}

namespace distlock::sync {

class Holding;
class HoldingStep;
struct Services;

// The KEYS and ARGV of one release call (views that stay valid while the
// holding and the expected-count text live).
struct ReleaseArgs {
  std::array<std::string_view, 5> keys{};
  std::size_t key_count = 0;
  std::array<std::string_view, 8> args{};
  std::size_t arg_count = 0;

  void key(std::string_view k) { keys[key_count++] = k; }
  void arg(std::string_view a) { args[arg_count++] = a; }
  std::span<const std::string_view> key_span() const { return {keys.data(), key_count}; }
  std::span<const std::string_view> arg_span() const { return {args.data(), arg_count}; }
};

class Primitive {
 public:
  virtual ~Primitive() = default;
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;

  // The name its user gave.
  const std::string& name() const noexcept { return name_; }

  // The key every key of this primitive shares a slot with: what its calls
  // are routed by.
  virtual std::string_view route_key() const = 0;
  // Tells a thread's holds of different kinds on one name apart ("lock",
  // "read", "write", ...): two kinds never share a thread hold.
  virtual std::string_view kind() const = 0;
  // The `primitive` label its acquires and holds count under in the Client's
  // metrics. Kinds may share one (a new lock-like primitive may count as
  // MetricPrimitive::lock); a new label is a new MetricPrimitive value.
  virtual MetricPrimitive metric() const = 0;
  // False: a thread that holds it cannot take it again. Its try_lock then
  // returns false at once, and lock() fails with invalid_argument (waiting
  // for itself would never end).
  virtual bool reentrant() const { return true; }
  // A kind of hold on the same name that this one must not be taken on top
  // of when the thread holds only that kind (a write lock over a read hold:
  // the upgrade that deadlocks). Empty: none.
  virtual std::string_view refused_over() const { return {}; }
  // Hands out fencing tokens (Attempt::token on a first hold).
  virtual bool fenced() const { return false; }
  // The owner id a holding by `base` (a thread's "<client>:<n>" or a
  // Lease's "<client>:<random>") uses on the server.
  virtual std::string owner_for(std::string base) const { return base; }
  // Kept by each holding of `owner` for its release_args (a payload that
  // names this one release, for waiters that hear it from several nodes);
  // empty by default.
  virtual std::string release_tag(const std::string& owner) const {
    (void)owner;
    return {};
  }

  // The acquire step of `state` becoming `count_after` holds.
  virtual std::unique_ptr<HoldingStep> acquire_step(Services& client,
                                                    std::shared_ptr<Holding> state,
                                                    std::uint32_t count_after) const = 0;
  // How the watchdog renews (or checks) a holding by `owner`.
  virtual runtime::Renewal renewal(const std::string& owner) const = 0;
  // The release of `expected` holds of `state`: its script, and its KEYS /
  // ARGV into `out`. The script answers as release.lua does: -1 not held by
  // this owner, 0 decremented (still held, lease re-armed), 1 released, 2 the
  // count differs from `expected` (this release was applied already).
  virtual const script::Script& release_script() const = 0;
  virtual void release_args(const Holding& state,
                            std::string_view expected,
                            ReleaseArgs& out) const = 0;
  // Reads release_script()'s reply into release.lua's answers (above), for
  // a script that answers otherwise (the semaphore's); the default passes
  // it on unchanged.
  virtual Value release_reply(Value reply) const { return reply; }

  // Queries of the server's state, one round trip each (Lock's is_locked,
  // hold_count, remaining_ttl, force_unlock). On failure they set ec and
  // `what` (the server's text for an error reply) and return the empty
  // answer. The defaults read a lock hash of owner -> count at route_key().
  virtual bool query_locked(const Services& client, std::error_code& ec, std::string& what) const;
  // The hold count of `owner` (0 when it holds none).
  virtual std::uint32_t query_count(const Services& client,
                                    const std::string& owner,
                                    std::error_code& ec,
                                    std::string& what) const;
  // nullopt when not held; milliseconds::max() when held without expiry.
  virtual std::optional<std::chrono::milliseconds> query_ttl(const Services& client,
                                                             std::error_code& ec,
                                                             std::string& what) const;
  // Deletes it whoever holds it and wakes its waiters; true when it was held.
  virtual bool force_release(const Services& client, std::error_code& ec, std::string& what) const;

 protected:
  // Validates `name` (non-empty, at most 64 KiB); throws Error(invalid_argument)
  // naming `what` ("lock", "fair lock", ...).
  Primitive(std::string name, std::string_view what);
  // The channel force_release() publishes on by default ("" = none).
  virtual std::string_view unlock_channel() const { return {}; }
  // The lock-delay marker force_release() deletes by default ("" = none).
  virtual std::string_view delay_marker() const { return {}; }
  // A force_release() by `script` with these KEYS and ARGV, blocking: true
  // when its reply is 1 (it was held). On failure sets ec and `what` (the
  // server's text for an error reply, else "force_unlock of '<name>'").
  bool force_release_call(const Services& client,
                          const script::Script& script,
                          std::span<const std::string_view> keys,
                          std::span<const std::string_view> args,
                          std::error_code& ec,
                          std::string& what) const;

 private:
  std::string name_;
};

// One query command, blocking. On failure sets ec and `what` and returns nil.
Value query(const Services& client,
            std::span<const std::string_view> args,
            std::error_code& ec,
            std::string& what);
// As query, for an integer reply: protocol_error for a reply of another type.
std::int64_t query_integer(const Services& client,
                           std::span<const std::string_view> args,
                           std::error_code& ec,
                           std::string& what);

}  // namespace distlock::sync
