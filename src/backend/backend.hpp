// A backend other than Redis, as the ClientImpl owns it: it connects, makes
// the lock engine of each name (lock_engine.hpp) and closes. The Redis parts
// of the ClientImpl (topology, watchdog, waiters, ...) are not made for such
// a Client; the factories of primitives a backend lacks fail with
// errc::not_supported (sync::services_for).
#pragma once

#include <asio/io_context.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "distlock/client_options.hpp"
#include "distlock/lock_options.hpp"
#include "runtime/executor.hpp"

namespace distlock::backend {

class LockEngine;

class Backend {
 public:
  virtual ~Backend() = default;
  // As it appears in messages: "ZooKeeper".
  virtual std::string_view name() const noexcept = 0;
  // Makes the first connection, blocking; throws Error (connection_failed,
  // auth_failed, ...). The I/O thread runs already.
  virtual void connect() = 0;
  // Ends the session (its holdings are released by the server), fails what
  // waits with closed, marks held leases lost (client_closed). Idempotent;
  // not on the I/O thread; the I/O thread still runs.
  virtual void close() noexcept = 0;
  // The engine of the lock `name`; throws Error(invalid_argument) for a name
  // the backend cannot hold, Error(not_supported) for an option it lacks.
  // `client` (the ClientImpl) is kept alive by the engine and its holdings,
  // as a Redis Lock keeps its Client's parts.
  virtual std::shared_ptr<LockEngine> lock(std::shared_ptr<void> client,
                                           std::string name,
                                           bool fenced,
                                           const LockOptions& options) = 0;
};

// The backend `options.backend` names (not redis). No I/O.
std::unique_ptr<Backend> make_backend(const ClientOptions& options,
                                      runtime::Executor& executor,
                                      const std::string& client_id);

}  // namespace distlock::backend
