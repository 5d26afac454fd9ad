// One connection to a SQL server (MySQL/MariaDB or PostgreSQL), driven
// without blocking on the Client's I/O thread. The SQL lock backend
// (sql_lock.hpp) holds each lock on a connection of its own: the server
// releases a session's locks when the session ends, so the connection is
// the lease.
//
// Every member is called on the I/O thread, and every callback runs there.
// A driver reads and writes its socket with Asio (the socket's fd wrapped in
// a stream descriptor, readiness waits only), never with a blocking call on
// the I/O thread.
#pragma once

#include <asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "distlock/client_options.hpp"

namespace distlock::backend::sql {

// What one statement returned: the first column of its first row, as text.
struct Result {
  // Clear on success. Otherwise: errc::connection_lost (the connection
  // dropped or was closed by the server; `alive()` is false after it),
  // errc::server_error (the server's error: `code` says which),
  // errc::timeout (no reply within command_timeout; the connection is
  // closed then, as its state is unknown), errc::closed (close() was called).
  std::error_code ec;
  // The server's message, or what failed; never contains the password.
  std::string message;
  // The server's error code: PostgreSQL's SQLSTATE ("55P03"
  // lock_not_available, "57014" query_canceled, ...), MySQL's error number
  // as text ("1205", "1317" query interrupted, ...). Empty when none.
  std::string code;
  // The first column of the first row; nullopt for SQL NULL or no row.
  std::optional<std::string> value;

  // value as an integer (PostgreSQL's booleans "t"/"f" are 1/0); nullopt
  // when NULL, missing or not a number.
  std::optional<std::int64_t> integer() const;
};

using Params = std::vector<std::string>;

class Connection {
 public:
  virtual ~Connection() = default;

  // Opens the connection: TCP (connect_timeout), TLS when options.tls.enabled,
  // authentication, the database. `done` is called once with a clear code,
  // or with errc::connection_failed (unreachable, refused, timed out, TLS),
  // errc::auth_failed (bad user or password; the message never contains the
  // password) or errc::server_error (no such database, ...). The message
  // names the server (host:port) and the backend.
  virtual void open(std::function<void(std::error_code, std::string)> done) = 0;

  // Runs one statement with positional parameters (the statement text uses
  // the server's markers: $1, $2, ... on PostgreSQL, ? on MySQL), sent as
  // text and bound by the server or escaped by the client library, never
  // spliced into the text by us. Statements queue: one runs at a time, in
  // order. `done` is called once. No reply within options.command_timeout
  // ends it with errc::timeout, unless `no_timeout` is set (a lock wait that
  // the server ends by itself: GET_LOCK's timeout, lock_timeout).
  virtual void query(std::string sql,
                     Params params,
                     std::function<void(Result)> done,
                     bool no_timeout = false) = 0;

  // Asks the server to stop the statement running now; its `done` then
  // gets the server's error (PostgreSQL: a cancel request on a side
  // connection, SQLSTATE 57014; MySQL: KILL QUERY <session_id()> on a side
  // connection, error 1317). The side connection must not block the I/O
  // thread. Nothing happens when no statement runs.
  virtual void cancel() = 0;

  // `f` is called once when the connection is found closed while no
  // statement runs: the socket is watched for readability while idle, so a
  // server that closes it (KILL, pg_terminate_backend, a restart) is noticed
  // at once. A drop while a statement runs ends that statement with
  // connection_lost instead (and `f` is called too). Set before the first
  // query; not called after close().
  virtual void on_drop(std::function<void(std::string why)> f) = 0;

  // False once the connection dropped, timed out or was closed.
  virtual bool alive() const noexcept = 0;

  // The server's id of this session: PostgreSQL's backend pid, MySQL's
  // CONNECTION_ID(). Valid after open() succeeded.
  virtual std::int64_t session_id() const noexcept = 0;

  // Closes the socket (the server ends the session and releases its locks);
  // a statement running or queued ends with errc::closed. No callback runs
  // after close() returns except those `done`s. Idempotent.
  virtual void close() noexcept = 0;
};

// The drivers. No I/O until open(). `options` must outlive the connection.
std::unique_ptr<Connection> make_postgresql_connection(const ClientOptions& options,
                                                       asio::io_context& io);
std::unique_ptr<Connection> make_mysql_connection(const ClientOptions& options,
                                                  asio::io_context& io);

}  // namespace distlock::backend::sql
