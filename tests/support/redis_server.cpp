#include "support/redis_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "support/fixture_io.hpp"
#include "support/free_ports.hpp"
#include "support/server_dir.hpp"
#include "support/tls_material.hpp"

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::chrono::seconds kReadyBound{10};
constexpr std::chrono::seconds kStopBound{5};
constexpr std::chrono::seconds kCliBound{10};
constexpr int kPortAttempts = 5;

sockaddr_in loopback_address(const std::string& host, std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  return addr;
}

// Double-quoted, as redis.conf parses it (sdssplitargs).
std::string quoted(const std::string& value) {
  std::string result = "\"";
  for (const char c : value) {
    if (c == '"' || c == '\\') result += '\\';
    result += c;
  }
  return result + "\"";
}

}  // namespace

bool raw_ping(const std::string& host, std::uint16_t port, milliseconds bound) {
  const auto deadline = Clock::now() + bound;
  const Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (s.get() < 0) return false;
  const sockaddr_in addr = loopback_address(host, port);
  if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS || !poll_for(s.get(), POLLOUT, deadline)) return false;
    int error = 0;
    socklen_t len = sizeof error;
    if (::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) return false;
  }
  static constexpr char kPing[] = "*1\r\n$4\r\nPING\r\n";
  if (::send(s.get(), kPing, sizeof kPing - 1, MSG_NOSIGNAL) != sizeof kPing - 1) return false;
  std::string reply;
  while (reply.find("\r\n") == std::string::npos) {
    if (!poll_for(s.get(), POLLIN, deadline)) return false;
    char buffer[256];
    const ssize_t n = ::recv(s.get(), buffer, sizeof buffer, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return false;
    if (n > 0) reply.append(buffer, static_cast<std::size_t>(n));
  }
  return reply.rfind("+PONG", 0) == 0 || reply.rfind("-NOAUTH", 0) == 0 ||
         reply.rfind("-NOPERM", 0) == 0;
}

RedisServer::RedisServer(RedisServerOptions options)
    : options_(std::move(options)), owner_(::getpid()) {
  dir_ = make_temp_dir("distlock-redis-");
  start_in_dir(
      "redis-server", process_, dir_, kPortAttempts, [] {},
      [this] {
        const std::vector<std::uint16_t> ports = pick_free_ports(options_.cluster ? 2 : 1);
        port_ = ports[0];
        if (options_.cluster) bus_port_ = ports[1];
        write_config();
        return launch();
      },
      [this] { return log_tail(); });
}

RedisServer::~RedisServer() {
  tear_down(owner_, process_, dir_, [this] { stop(); });
}

void RedisServer::write_config() const {
  std::ofstream conf(dir_ + "/redis.conf");
  conf << "bind 127.0.0.1\n";
  if (options_.tls) {
    const TlsMaterial& tls = tls_material();
    conf << "port 0\ntls-port " << port_ << "\ntls-cert-file " << tls.server_cert
         << "\ntls-key-file " << tls.server_key << "\ntls-ca-cert-file " << tls.ca_cert
         << "\ntls-auth-clients no\n";
  } else {
    conf << "port " << port_ << "\n";
  }
  conf << "daemonize no\nsave \"\"\nappendonly no\ndir " << dir_ << "\nlogfile " << log_path()
       << "\nprotected-mode no\nenable-debug-command yes\n";
  if (!options_.requirepass.empty()) conf << "requirepass " << quoted(options_.requirepass) << "\n";
  for (const auto& rule : options_.acl_users) conf << "user " << rule << "\n";
  if (options_.cluster) {
    conf << "cluster-enabled yes\ncluster-config-file " << dir_ << "/nodes.conf\ncluster-port "
         << bus_port_ << "\n";
  }
  if (options_.unix_socket) conf << "unixsocket " << dir_ << "/redis.sock\nunixsocketperm 700\n";
  for (const auto& [name, value] : options_.config) conf << name << " " << value << "\n";
  if (!conf.flush()) throw std::runtime_error("cannot write " + dir_ + "/redis.conf");
}

bool RedisServer::launch() {
  const std::uintmax_t log_offset = size_or_zero(log_path());
  SpawnOptions spawn_options;
  // Config errors go to stderr before the logfile is open: keep them in the log.
  spawn_options.output_path = log_path();
  std::vector<std::string> argv{"redis-server", dir_ + "/redis.conf"};
  if (options_.sentinel) argv.emplace_back("--sentinel");
  process_ = ChildProcess::spawn(argv, spawn_options);
  if (wait_until_ready(log_offset)) return true;
  const std::optional<int> status = process_.wait_for_exit(milliseconds(0));
  const std::string log = read_from(log_path(), log_offset);
  if (status && log.find("Address already in use") != std::string::npos) return false;
  const std::string what =
      status ? "exited (" + describe_wait_status(*status) + ") before it was ready"
             : "was not ready within " + std::to_string(kReadyBound.count()) + " s";
  process_.kill_and_reap();
  throw std::runtime_error("redis-server on port " + std::to_string(port_) + " " + what +
                           "; log:\n" + tail(log, 30));
}

// Polls (bounded) until the log written since log_offset says the server is
// ready and, for plain TCP, a raw PING is answered. Both are required: a PING
// alone could be answered by another process that took the port first.
// Returns false if the process exits or the bound passes.
bool RedisServer::wait_until_ready(std::uintmax_t log_offset) {
  const auto deadline = Clock::now() + kReadyBound;
  // A sentinel never logs "Ready to accept connections" (7.0 server.c).
  const char* const marker = options_.sentinel ? "Sentinel ID is" : "Ready to accept connections";
  bool logged_ready = false;
  while (Clock::now() < deadline) {
    if (!process_.running()) return false;
    logged_ready =
        logged_ready || read_from(log_path(), log_offset).find(marker) != std::string::npos;
    if (logged_ready && (options_.tls || raw_ping(host_, port_, milliseconds(1000)))) return true;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return false;
}

std::string RedisServer::uri() const {
  std::string result = options_.tls ? "rediss://" : "redis://";
  if (!options_.requirepass.empty()) result += ":" + percent_encoded(options_.requirepass) + "@";
  result += host_ + ":" + std::to_string(port_);
  if (options_.tls) result += "?ca_file=" + tls_material().ca_cert + "&server_name=localhost";
  return result;
}

std::string RedisServer::unix_socket_path() const {
  if (!options_.unix_socket) {
    throw std::logic_error("RedisServer::unix_socket_path: unix_socket is not enabled");
  }
  return dir_ + "/redis.sock";
}

void RedisServer::start() {
  if (running()) throw std::logic_error("RedisServer::start: already running");
  write_config();
  if (!launch()) {
    throw std::runtime_error("redis-server: port " + std::to_string(port_) +
                             " was taken meanwhile; log:\n" + log_tail());
  }
}

void RedisServer::stop() {
  if (!running()) {
    process_.kill_and_reap();  // reaps one that exited by itself
    return;
  }
  process_.signal(SIGTERM);
  process_.signal(SIGCONT);
  if (!process_.wait_for_exit(kStopBound)) process_.kill_and_reap();
}

void RedisServer::kill() {
  process_.kill_and_reap();
}

void RedisServer::pause() {
  process_.signal(SIGSTOP);
  if (!process_.wait_for_stopped(kStopBound)) {
    throw std::runtime_error("redis-server pid " + std::to_string(pid()) + " did not stop");
  }
}

void RedisServer::resume() {
  process_.signal(SIGCONT);
}

void RedisServer::restart() {
  stop();
  start();
}

std::string RedisServer::cli(const std::vector<std::string>& args) const {
  return cli_with_auth("", options_.requirepass, args);
}

std::string RedisServer::cli_as(const std::string& user,
                                const std::string& password,
                                const std::vector<std::string>& args) const {
  return cli_with_auth(user, password, args);
}

std::string RedisServer::cli_with_auth(const std::string& user,
                                       const std::string& password,
                                       const std::vector<std::string>& args) const {
  std::vector<std::string> argv{"redis-cli",        "-h", host_, "-p", std::to_string(port_),
                                "--no-auth-warning"};
  if (options_.tls) {
    const TlsMaterial& tls = tls_material();
    argv.insert(argv.end(), {"--tls", "--cacert", tls.ca_cert, "--cert", tls.client_cert, "--key",
                             tls.client_key});
  }
  if (!user.empty()) argv.insert(argv.end(), {"--user", user});
  argv.insert(argv.end(), args.begin(), args.end());
  EnvVars env;
  if (!password.empty()) env.emplace_back("REDISCLI_AUTH", password);
  std::string output = run_capture(argv, kCliBound, env);
  if (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

std::string RedisServer::log_tail(std::size_t lines) const {
  return tail(read_from(log_path(), 0), lines);
}

}  // namespace distlock::test
