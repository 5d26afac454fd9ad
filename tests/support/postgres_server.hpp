// A real PostgreSQL server for the SQL backend's tests.
//
// Each PostgresServer is its own `postgres` process (Debian's
// /usr/lib/postgresql/<newest>/bin) on a free 127.0.0.1 port, with its own
// /tmp/distlock-pg-XXXXXX directory (make_temp_dir) holding the data
// directory and the Unix socket, fsync off. Host connections authenticate
// with scram-sha-256; the Unix socket trusts the superuser `postgres`, which
// sql() uses to inspect and to act on the server.
//
// initdb runs once per machine, version and user: its result, with the role
// `distlock` and the database `distlock_test`, is kept as a template under
// /tmp/distlock-pg-template-<version>-<uid> (built under an flock, published
// by rename) and copied for each server. PostgreSQL refuses to run as root:
// as root, initdb and postgres run as the user `postgres` (else `nobody`)
// through setpriv, which keeps the parent-death signal process.hpp relies on.
// Without the server packages the constructor throws naming them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "distlock/client_options.hpp"
#include "support/process.hpp"

namespace distlock::test {

// Not thread-safe, except that the const methods may run concurrently.
class PostgresServer {
 public:
  // The role and database every server has, and the role's password.
  static constexpr const char* kUser = "distlock";
  static constexpr const char* kPassword = "pg-s3cret'\\pw";
  static constexpr const char* kDatabase = "distlock_test";

  // Starts the server and returns once it accepts connections (a ping over
  // TCP answers). Retries on another port (up to 5) when the chosen one is
  // taken before postgres binds it. Throws std::runtime_error with the tail
  // of the server log if it exits or is not ready within 30 s, or naming the
  // packages to install (postgresql libpq-dev) when they are missing.
  PostgresServer();
  // Stops the server like stop() and removes its directory. Never throws.
  // Does nothing in a fork()ed copy of the test binary.
  ~PostgresServer();

  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  std::uint16_t port() const { return port_; }
  // "postgresql://distlock:<password, percent-encoded>@127.0.0.1:PORT/distlock_test".
  std::string uri() const;
  // backend postgresql, host, port, username, password and database set;
  // everything else default.
  ClientOptions options() const;
  // The server's directory; its log is log_path().
  const std::string& dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/postgres.log"; }
  pid_t pid() const { return process_.pid(); }
  bool running() const { return process_.running(); }

  // Runs `sql` as the superuser in distlock_test over the Unix socket
  // (blocking libpq) and returns the first column of the first row of its
  // result ("" for none or NULL). Throws std::runtime_error with the
  // server's message on any error, or if the server is unreachable.
  std::string sql(const std::string& sql) const;
  // SELECT pg_terminate_backend(pid): the server ends that session (FATAL
  // 57P01, then it closes the socket). Returns whether it did.
  bool terminate_backend(std::int64_t pid) const;

  // Fast shutdown (SIGINT: sessions end with 57P01, the socket closes),
  // SIGKILL after 10 s. Does nothing if not running.
  void stop();
  // Starts the server again on the same port with the same data, after
  // stop(). Throws std::runtime_error if it cannot (the port was taken).
  void start();
  // stop() then start().
  void restart();

  std::string log_tail(std::size_t lines = 30) const;

 private:
  bool launch();  // false: the port was taken
  bool wait_until_ready();

  std::string dir_;
  std::uint16_t port_ = 0;
  ChildProcess process_;
  pid_t owner_;
};

}  // namespace distlock::test
