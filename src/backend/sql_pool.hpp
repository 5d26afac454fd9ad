// The SQL backend's connections (I/O thread only). A lock is held by a
// connection, so a holding keeps one for as long as it holds, and an
// acquire keeps one while it waits; the pool opens at most
// max_connections, keeps the returned ones open for the next acquire, and
// hands a freed one to the acquires waiting for one, first come first
// served.
#pragma once

#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "backend/sql_dialect.hpp"

namespace distlock::backend::sql {

// One open connection, and who hears of its drop now.
struct Pooled {
  std::shared_ptr<const ClientOptions> options;  // the driver's, outlives it
  std::unique_ptr<Connection> connection;
  // Called once if the connection drops while lent (a holding's loss);
  // empty while idle or in an acquire (the statement in flight reports it).
  std::function<void(const std::string& why)> on_drop;
  // The wait the session's lock_timeout holds now (PostgreSQL), so it is
  // set only when it changes; nullopt until set.
  std::optional<std::optional<std::int64_t>> lock_wait;
};

class Pool : public std::enable_shared_from_this<Pool> {
 public:
  using Ready = std::function<void(std::error_code, std::string, std::shared_ptr<Pooled>)>;

  Pool(std::shared_ptr<const ClientOptions> options, asio::io_context& io, const Dialect& dialect)
      : options_(std::move(options)), io_(io), dialect_(dialect) {}

  // Hands a connection to `ready`: an idle one, a new one while fewer than
  // max_connections are open, else the first one returned. `ready` gets
  // errc::timeout when none was free by `deadline`, closed after close(),
  // or the open's error. Returns a ticket for withdraw().
  std::uint64_t get(std::optional<std::chrono::steady_clock::time_point> deadline, Ready ready);
  // A waiter that gave up: its `ready` is never called.
  void withdraw(std::uint64_t ticket);
  // A connection back from its user: kept for the next one when alive.
  void put(std::shared_ptr<Pooled> c);
  // A connection that must not be used again (dropped, timed out, or its
  // state unknown): closed, its place freed.
  void discard(std::shared_ptr<Pooled> c);
  // Closes the idle connections and fails the waiters with closed; lent
  // ones are closed by their users.
  void close();

  std::size_t open_count() const noexcept { return open_; }

 private:
  struct Waiter {
    std::uint64_t ticket;
    Ready ready;
    std::unique_ptr<asio::steady_timer> timer;
  };
  void open_for(Ready ready);
  void set_up(const std::shared_ptr<Pooled>& c, Ready ready);
  void serve_next();

  const std::shared_ptr<const ClientOptions> options_;
  asio::io_context& io_;
  const Dialect& dialect_;
  std::deque<std::shared_ptr<Pooled>> idle_;
  std::deque<Waiter> waiters_;
  std::size_t open_ = 0;  // idle, lent and opening
  std::uint64_t next_ticket_ = 1;
  bool closed_ = false;
};

}  // namespace distlock::backend::sql
