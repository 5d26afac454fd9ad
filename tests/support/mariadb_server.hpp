// A real MariaDB server (mariadbd) for the SQL backend tests.
//
// Each MariaDbServer is its own mariadbd process on a free 127.0.0.1 port,
// with its own /tmp/distlock-mariadb-XXXXXX directory holding the data
// directory, the Unix socket (root's way in), the pid file and the error
// log. The data directory is copied from a template made once per machine,
// server version and user (/tmp/distlock-mariadb-template-<version>-<uid>,
// made under an flock and published by rename, so parallel test binaries
// share it): mariadb-install-db takes seconds, a copy milliseconds. The
// template holds the user 'distlock'@'%' (password kPassword) with all
// privileges on the database distlock_test, and root@localhost without a
// password, over the socket only.
//
// Missing binaries (mariadbd, mariadb-install-db) make the constructor throw
// naming the packages to install (mariadb-server libmariadb-dev): the tests
// fail, they do not skip.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "distlock/client_options.hpp"
#include "support/process.hpp"

namespace distlock::test {

// Not thread-safe, except that the const methods may run concurrently.
class MariaDbServer {
 public:
  static constexpr const char* kUser = "distlock";
  static constexpr const char* kPassword = "distlock-test-pw";
  static constexpr const char* kDatabase = "distlock_test";

  // Starts the server and returns once root can run a query on it. Retries
  // on another port (up to 5) when the chosen one is taken first. Throws
  // std::runtime_error with the tail of the error log if it exits or is not
  // ready within 30 s (the process and directory are then cleaned up).
  MariaDbServer();
  // Stops the server like stop() and removes its directory. Never throws.
  ~MariaDbServer();

  MariaDbServer(const MariaDbServer&) = delete;
  MariaDbServer& operator=(const MariaDbServer&) = delete;

  // "127.0.0.1".
  const std::string& host() const { return host_; }
  // The port, the same for the whole life of the object.
  std::uint16_t port() const { return port_; }
  // "mysql://distlock:PASSWORD@127.0.0.1:PORT/distlock_test".
  std::string uri() const;
  // backend mysql, host, port, username, password and database as uri().
  ClientOptions options() const;
  // The server's directory; "<dir>/mariadbd.sock" is its Unix socket.
  const std::string& dir() const { return dir_; }
  std::string socket_path() const { return dir_ + "/mariadbd.sock"; }
  pid_t pid() const { return process_.pid(); }
  bool running() const { return process_.running(); }

  // Runs `sql` as root over the Unix socket (blocking, 10 s bound) and
  // returns the first column of the first row; nullopt for NULL or no row.
  // Throws std::runtime_error with the server's error.
  std::optional<std::string> root_query(const std::string& sql) const;
  // KILL <id> as root: ends that session (its connection is closed).
  void kill_connection(std::int64_t id) const;

  // Starts the server again on the same port with the same data, after
  // stop() or kill(). Throws std::logic_error if running.
  void start();
  // SIGTERM, waits for the exit (SIGKILL after 10 s). Nothing if not running.
  void stop();
  // SIGKILL and reap. Nothing if not running.
  void kill();
  // stop() then start(): same port, same data, new pid.
  void restart();

  // The last `lines` lines of the error log, for failure messages.
  std::string log_tail(std::size_t lines = 30) const;

 private:
  std::string log_path() const { return dir_ + "/error.log"; }
  // Returns false if mariadbd exited because the port was in use.
  bool launch();

  std::string host_ = "127.0.0.1";
  std::string dir_;
  std::uint16_t port_ = 0;
  ChildProcess process_;
  pid_t owner_;
};

}  // namespace distlock::test
