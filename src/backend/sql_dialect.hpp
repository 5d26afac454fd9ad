// What differs between the SQL servers the lock backend speaks to: the
// statements, how a lock name becomes the server's lock, and how a reply
// reads. Statements carry values only as parameters ($1 / ?); the only
// numbers written into a statement's text are ones the server itself
// returned (a session id to KILL).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "backend/sql_connection.hpp"

namespace distlock::backend::sql {

// One statement and its parameters.
struct Statement {
  std::string text;
  Params params;
};

class Dialect {
 public:
  virtual ~Dialect() = default;
  // As messages name the server: "PostgreSQL", "MySQL".
  virtual std::string_view name() const noexcept = 0;
  // The server's lock for the lock `name` (PostgreSQL: the 64-bit key, in
  // decimal; MySQL: the lock name). Throws Error(invalid_argument) for a
  // name it cannot map.
  virtual std::string server_lock(const std::string& name) const = 0;

  // Run once on every new connection: the server ends the session when it
  // has been idle (no statement) for `idle_limit`, and with it the session's
  // locks (PostgreSQL's idle_session_timeout, MySQL's wait_timeout). A
  // holding's liveness check keeps its session busy, so only a holder whose
  // checks stopped (a silent link, a stopped process) is ended by it.
  virtual Statement session_setup(std::chrono::milliseconds idle_limit) const = 0;
  // Run before `lock` on the same connection (PostgreSQL: sets lock_timeout
  // to `wait_ms`, 0 for none); nullopt when the lock statement carries the
  // wait itself.
  virtual std::optional<Statement> before_lock(const std::string& lock,
                                               std::optional<std::int64_t> wait_ms,
                                               bool shared) const = 0;
  // Takes the lock: at once (wait_ms 0), waiting up to wait_ms, or as long
  // as it takes (nullopt).
  virtual Statement lock(const std::string& lock,
                         std::optional<std::int64_t> wait_ms,
                         bool shared) const = 0;
  // Whether `r` (the lock statement's result) says the lock is held now;
  // nullopt when it failed for another reason than the wait running out.
  virtual std::optional<bool> locked(const Result& r,
                                     std::optional<std::int64_t> wait_ms) const = 0;
  // Releases the lock; its result's integer() is 1 when it was held.
  virtual Statement unlock(const std::string& lock, bool shared) const = 0;
  // Whether anyone holds the lock (exclusive or shared, per `shared`);
  // integer() > 0 when held.
  virtual Statement held(const std::string& lock, bool shared) const = 0;
  // Ends the sessions holding the lock, waiting up to wait_ms for them to
  // be gone; integer() is how many, unless kill() is set: then integer() is
  // the holder's session id (NULL: none), which kill() ends.
  virtual Statement end_holders(const std::string& lock,
                                bool shared,
                                std::int64_t wait_ms) const = 0;
  virtual std::optional<Statement> kill(std::int64_t session) const = 0;
  // Whether the server has shared (read) locks.
  virtual bool has_shared() const noexcept = 0;
  // The fencing counter: made once per Client, then bumped under the lock;
  // the bump's last statement's integer() is the new token.
  virtual Statement fence_table() const = 0;
  virtual Statement fence_bump(const std::string& lock) const = 0;
  // A second statement after fence_bump (MySQL reads LAST_INSERT_ID());
  // nullopt when the bump returns the token itself.
  virtual std::optional<Statement> fence_read() const = 0;
  // The cheapest statement: the holding's liveness check.
  virtual Statement ping() const = 0;

  // The driver for this server.
  virtual std::unique_ptr<Connection> connect(const ClientOptions& options,
                                              asio::io_context& io) const = 0;
};

// The dialects; they live as long as the program.
const Dialect& postgresql();
const Dialect& mysql();

// PostgreSQL's advisory lock key of `name`: the first 8 bytes of SHA-256 of
// its bytes, big-endian, as a signed 64-bit integer.
std::int64_t postgresql_key(std::string_view name);
// MySQL's lock name for `name`: the name itself up to 64 bytes; a longer
// one is the 64 lowercase hex digits of its SHA-256.
std::string mysql_lock_name(std::string_view name);

}  // namespace distlock::backend::sql
