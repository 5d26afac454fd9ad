// A real redis-server for integration and fault tests.
//
// Each RedisServer is its own redis-server process on a free 127.0.0.1 port,
// with its own /tmp/distlock-redis-XXXXXX directory (make_temp_dir), no
// persistence (save "", appendonly no) and enable-debug-command yes. It is
// stopped by pid and its directory removed when the object is destroyed;
// process.hpp explains how the process is also killed when the test binary
// dies, and how the directory is removed later when it could not be.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "support/process.hpp"

namespace distlock::test {

struct RedisServerOptions {
  // When non-empty, sets requirepass (the password of the default user).
  std::string requirepass;
  // Each entry is an ACL rule line written after "user", for example
  // "alice on >s3cret ~* &* +@all".
  std::vector<std::string> acl_users;
  // TLS only: "port 0" and tls-port = the chosen port, with the certificates
  // of tls_material() and tls-auth-clients no.
  bool tls = false;
  // Also listen on <dir>/redis.sock (unixsocketperm 700).
  bool unix_socket = false;
  // Cluster mode: cluster-enabled yes, cluster-config-file <dir>/nodes.conf
  // (kept across start()/restart(), so a restarted node rejoins with its
  // node id) and the cluster bus on a second free port, cluster_bus_port(),
  // chosen with the port and kept for the object's life. Other cluster
  // settings (cluster-node-timeout, ...) go in `config`.
  bool cluster = false;
  // Sentinel mode: started as `redis-server <conf> --sentinel` (Debian's
  // redis-sentinel binary may be absent) and ready once its log says
  // "Sentinel ID is" and it answers PING. The sentinel rewrites its config
  // file; start() writes a fresh one (a new sentinel id). The `sentinel ...`
  // directives go in `config`, in order.
  bool sentinel = false;
  // Extra directives, written verbatim as "name value" lines after all the
  // others (so they override them), for example {"maxmemory", "1mb"}.
  std::vector<std::pair<std::string, std::string>> config;
};

// Not thread-safe, except that the const methods (cli, uri, ...) may run
// concurrently with each other.
class RedisServer {
 public:
  // Starts the server and returns once it is ready: its log says "Ready to
  // accept connections" and, unless TLS, it answers PING (+PONG or -NOAUTH)
  // on a raw TCP socket. Retries on another port (up to 5 ports) when the
  // chosen one is taken before redis-server binds it. Throws
  // std::runtime_error with the tail of the server log if it exits or is not
  // ready within 10 s (the process and directory are then cleaned up).
  explicit RedisServer(RedisServerOptions options = {});
  // Stops the server like stop() and removes its directory. Never throws. In
  // a fork()ed copy of the test binary (a gtest "fast" death test that calls
  // exit()) it does nothing: the server belongs to the parent.
  ~RedisServer();

  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // "127.0.0.1".
  const std::string& host() const { return host_; }
  // The port, the same for the whole life of the object (the TLS port for a
  // TLS server).
  std::uint16_t port() const { return port_; }
  // The cluster bus port with options.cluster, 0 otherwise.
  std::uint16_t cluster_bus_port() const { return bus_port_; }
  // "redis://127.0.0.1:PORT"; "redis://:PASSWORD@127.0.0.1:PORT" with
  // requirepass (the password percent-encoded); TLS:
  // "rediss://[:PASSWORD@]127.0.0.1:PORT?ca_file=<ca>&server_name=localhost".
  std::string uri() const;
  // "<dir>/redis.sock". Throws std::logic_error unless options.unix_socket.
  std::string unix_socket_path() const;
  // The server's directory (config, log, socket).
  const std::string& dir() const { return dir_; }
  // "<dir>/redis.log": the server's log, with its stdout and stderr.
  std::string log_path() const { return dir_ + "/redis.log"; }
  // The pid of the current (or last) redis-server process.
  pid_t pid() const { return process_.pid(); }
  // True while the process is alive (a paused server is running).
  bool running() const { return process_.running(); }

  // Starts the server again on the same port, after stop() or kill(), and
  // waits until it is ready as the constructor does. Throws std::logic_error
  // if it is running, std::runtime_error if it cannot start (for example the
  // port was taken meanwhile).
  void start();
  // Sends SIGTERM (and SIGCONT, in case it is paused), waits for the exit and
  // reaps; SIGKILL if it has not exited within 5 s. Does nothing if not running.
  void stop();
  // SIGKILL and reap. Does nothing if not running.
  void kill();
  // SIGSTOP; returns once the process is stopped. Connections are still
  // accepted by the kernel but nothing is answered. Throws std::runtime_error
  // if it does not stop within 5 s.
  void pause();
  // SIGCONT. The server answers again (queued commands first).
  void resume();
  // stop() then start(): same port, new pid, all data lost.
  void restart();

  // Runs `redis-cli <args>` against this server (as the default user, with
  // requirepass if set; over TLS with the test CA and client certificate for
  // a TLS server) and returns its output without the final newline. Output
  // is redis-cli's raw format: "PONG", "" for nil, error replies as text
  // ("ERR ..."), one line per array element. The password is passed in
  // REDISCLI_AUTH, never on the command line. Throws std::runtime_error if
  // redis-cli exits non-zero (cannot connect) or takes longer than 10 s (for
  // example while the server is paused).
  std::string cli(const std::vector<std::string>& args) const;
  // Like cli(), authenticated as ACL user `user` with `password`. With a bad
  // password redis-cli continues as the default user.
  std::string cli_as(const std::string& user,
                     const std::string& password,
                     const std::vector<std::string>& args) const;

  // The last `lines` lines of the log, for failure messages.
  std::string log_tail(std::size_t lines = 30) const;

 private:
  void write_config() const;
  // Returns false if redis-server exited because the port was in use.
  bool launch();
  bool wait_until_ready(std::uintmax_t log_offset);
  std::string cli_with_auth(const std::string& user,
                            const std::string& password,
                            const std::vector<std::string>& args) const;

  RedisServerOptions options_;
  std::string host_ = "127.0.0.1";
  std::string dir_;
  std::uint16_t port_ = 0;
  std::uint16_t bus_port_ = 0;
  ChildProcess process_;
  pid_t owner_;  // the process that created this object
};

// Connects to host:port, sends PING on a raw socket and returns true if a
// reply line starting with "+PONG", "-NOAUTH" or "-NOPERM" arrives within
// bound (false on refusal, close, another reply, or timeout). Never throws.
bool raw_ping(const std::string& host, std::uint16_t port, std::chrono::milliseconds bound);

}  // namespace distlock::test
