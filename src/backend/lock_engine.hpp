// The seam between the public Lock and a backend other than Redis. A Lock
// made by a Redis Client holds a sync::Primitive and the Client's Services
// (the fast path, unchanged); a Lock made by a Client of another backend
// (ClientOptions::backend) holds a LockEngine instead, and every Lock member
// forwards to it. One engine serves one name; Lock copies share it.
//
// A backend plugs in with three pieces: a Backend (backend.hpp) that the
// ClientImpl owns and that makes engines; a LockEngine per name; and a
// holding type derived from runtime::LeaseState that releases itself
// (runtime::LeaseState::self_release), so Lease works unchanged.
#pragma once

#include <asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "distlock/client_async.hpp"
#include "distlock/lease.hpp"
#include "distlock/lock_async.hpp"
#include "runtime/lease_state.hpp"
#include "sync/acquire_loop.hpp"

namespace distlock::backend {

using std::chrono::milliseconds;

class LockEngine {
 public:
  virtual ~LockEngine() = default;

  virtual const std::string& name() const noexcept = 0;
  virtual bool fenced() const noexcept = 0;
  // The backend, as messages name it ("ZooKeeper").
  virtual std::string_view backend() const noexcept = 0;

  // The calling thread acquires (reentrant). `wait` nullopt waits as long as
  // it takes, zero tries once; `lease` nullopt is the backend's own lease
  // (a backend without leases refuses a fixed one with not_supported).
  // Never throws.
  virtual sync::AcquireOutcome lock_for_thread(std::optional<milliseconds> wait,
                                               std::optional<milliseconds> lease) = 0;
  // As Lock::unlock(ec).
  virtual std::error_code unlock_for_thread() noexcept = 0;
  // The calling thread's holding; null when it holds none. No I/O.
  virtual std::shared_ptr<runtime::LeaseState> thread_holding() const = 0;

  // A handle-owned holding: nullopt when not acquired in time (ec set on
  // failure, with `message` naming the problem).
  virtual std::optional<Lease> acquire_lease(std::optional<milliseconds> wait,
                                             std::optional<milliseconds> lease,
                                             std::error_code& ec,
                                             std::string& message) = 0;
  // As Lock::async_acquire: the receiver gets an empty Lease and no error
  // when it was not acquired in time.
  virtual std::shared_ptr<detail::AsyncAcquire> async_acquire(
      std::optional<milliseconds> wait, std::unique_ptr<detail::Receiver<Lease>> receiver) = 0;
  // Where async completions run by default (the Client's I/O thread).
  virtual asio::any_io_executor executor() const = 0;

  // Lock's queries, blocking, one or two round trips each. On failure they
  // set ec and `what` and return the empty answer.
  virtual bool is_locked(std::error_code& ec, std::string& what) const = 0;
  // The calling thread's hold count, as the server confirms it (0 when its
  // node is gone).
  virtual std::uint32_t hold_count(std::error_code& ec, std::string& what) const = 0;
  // nullopt when not held; milliseconds::max() when held without expiry.
  virtual std::optional<milliseconds> remaining_ttl(std::error_code& ec,
                                                    std::string& what) const = 0;
  virtual bool force_unlock(std::error_code& ec, std::string& what) = 0;
};

}  // namespace distlock::backend
