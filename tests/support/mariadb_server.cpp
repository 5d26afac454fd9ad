#include "support/mariadb_server.hpp"

#include <mysql.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

#include "support/fixture_io.hpp"
#include "support/free_ports.hpp"
#include "support/server_dir.hpp"

namespace distlock::test {
namespace {

using std::chrono::milliseconds;
namespace fs = std::filesystem;

constexpr std::chrono::seconds kReadyBound{30};
constexpr std::chrono::seconds kStopBound{10};
constexpr int kPortAttempts = 5;
constexpr const char* kMariadbd = "/usr/sbin/mariadbd";
constexpr const char* kInstallDb = "/usr/bin/mariadb-install-db";

void require_packages() {
  std::string missing;
  for (const char* path : {kMariadbd, kInstallDb}) {
    if (!fs::exists(path)) missing += std::string(missing.empty() ? "" : ", ") + path;
  }
  if (!missing.empty()) {
    throw std::runtime_error("MariaDbServer: missing " + missing +
                             ": install the packages mariadb-server libmariadb-dev");
  }
}

std::string user_name() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? pw->pw_name : std::to_string(::geteuid());
}

// "10.11.19-MariaDB-0+deb12u1", from `mariadbd --version`, as a file name.
std::string server_version() {
  const std::string out = run_capture({kMariadbd, "--version"}, milliseconds(30000));
  const std::size_t at = out.find("Ver ");
  std::string version;
  for (std::size_t i = at == std::string::npos ? 0 : at + 4; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    if (std::isspace(c)) break;
    version += std::isalnum(c) || c == '.' || c == '-' ? out[i] : '_';
  }
  return version.empty() ? "unknown" : version;
}

// Options shared by the template's bootstrap and every test server: small
// and unsafe on power loss, as nothing here must survive a crash.
std::vector<std::string> server_argv(const std::string& dir, std::uint16_t port) {
  std::vector<std::string> argv{kMariadbd,
                                "--no-defaults",
                                "--datadir=" + dir + "/data",
                                "--user=" + user_name(),
                                "--socket=" + dir + "/mariadbd.sock",
                                "--pid-file=" + dir + "/mariadbd.pid",
                                "--skip-log-bin",
                                "--skip-name-resolve",
                                "--innodb-buffer-pool-size=16M",
                                "--innodb-log-file-size=4M",
                                "--innodb-flush-log-at-trx-commit=0",
                                "--innodb-doublewrite=0"};
  if (port == 0) {
    argv.emplace_back("--skip-networking");
  } else {
    argv.emplace_back("--bind-address=127.0.0.1");
    argv.emplace_back("--port=" + std::to_string(port));
  }
  return argv;
}

struct MysqlCloser {
  void operator()(MYSQL* m) const { mysql_close(m); }
};
using MysqlHandle = std::unique_ptr<MYSQL, MysqlCloser>;

// A blocking root session over the Unix socket; throws with the error.
MysqlHandle root_session(const std::string& socket, unsigned int connect_timeout_s) {
  MysqlHandle m(mysql_init(nullptr));
  if (!m) throw std::bad_alloc();
  const unsigned int read_timeout = 10;
  mysql_options(m.get(), MYSQL_OPT_CONNECT_TIMEOUT, &connect_timeout_s);
  mysql_options(m.get(), MYSQL_OPT_READ_TIMEOUT, &read_timeout);
  mysql_options(m.get(), MYSQL_OPT_WRITE_TIMEOUT, &read_timeout);
  mysql_options(m.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  if (mysql_real_connect(m.get(), "localhost", "root", "", nullptr, 0, socket.c_str(), 0) ==
      nullptr) {
    throw std::runtime_error("root@" + socket + ": " + mysql_error(m.get()));
  }
  return m;
}

std::optional<std::string> run_query(MYSQL* m, const std::string& sql) {
  if (mysql_real_query(m, sql.data(), static_cast<unsigned long>(sql.size())) != 0) {
    throw std::runtime_error("`" + sql + "`: " + mysql_error(m));
  }
  MYSQL_RES* res = mysql_store_result(m);
  if (res == nullptr) {
    if (mysql_errno(m) != 0) throw std::runtime_error("`" + sql + "`: " + mysql_error(m));
    return std::nullopt;
  }
  std::optional<std::string> value;
  MYSQL_ROW row = mysql_fetch_row(res);
  if (row != nullptr && mysql_num_fields(res) > 0 && row[0] != nullptr) {
    value.emplace(row[0], mysql_fetch_lengths(res)[0]);
  }
  mysql_free_result(res);
  return value;
}

// Polls root's SELECT 1 until it works (true), the process exits or the
// bound passes (false).
bool wait_for_root(const ChildProcess& process, const std::string& socket) {
  return wait_until_ready(process, kReadyBound, milliseconds(20), [&socket] {
    try {
      run_query(root_session(socket, 1).get(), "SELECT 1");
      return true;
    } catch (const std::runtime_error&) {
      return false;
    }
  });
}

void stop_process(ChildProcess& process) {
  if (!process.running()) {
    process.kill_and_reap();
    return;
  }
  process.signal(SIGTERM);
  process.signal(SIGCONT);
  if (!process.wait_for_exit(kStopBound)) process.kill_and_reap();
}

// Runs mariadb-install-db and creates the test user and database in
// `staging`, which build_template_once then renames into place.
void build_template(const std::string& staging) {
  fs::create_directory(staging);
  fs::permissions(staging, fs::perms::owner_all);  // as private as make_temp_dir's
  run_capture({kInstallDb, "--no-defaults", "--auth-root-authentication-method=normal",
               "--skip-test-db", "--datadir=" + staging + "/data", "--user=" + user_name(),
               "--skip-log-bin", "--innodb-buffer-pool-size=16M", "--innodb-log-file-size=4M"},
              milliseconds(120000));
  SpawnOptions spawn_options;
  spawn_options.output_path = staging + "/error.log";
  ChildProcess process = ChildProcess::spawn(server_argv(staging, 0), spawn_options);
  if (!wait_for_root(process, staging + "/mariadbd.sock")) {
    throw std::runtime_error("the template's mariadbd did not start; log:\n" +
                             tail(read_from(staging + "/error.log", 0), 30));
  }
  {
    MysqlHandle root = root_session(staging + "/mariadbd.sock", 5);
    const std::string user = std::string("'") + MariaDbServer::kUser + "'";
    for (const char* host : {"'%'", "'localhost'"}) {
      run_query(root.get(), "CREATE USER " + user + "@" + host + " IDENTIFIED BY '" +
                                MariaDbServer::kPassword + "'");
      run_query(root.get(), std::string("GRANT ALL PRIVILEGES ON ") + MariaDbServer::kDatabase +
                                ".* TO " + user + "@" + host);
    }
    run_query(root.get(), std::string("CREATE DATABASE ") + MariaDbServer::kDatabase);
  }
  stop_process(process);
  fs::remove(staging + "/error.log");
}

// The template's path, made first if missing (one maker at a time).
std::string template_dir() {
  return build_template_once(
      "/tmp/distlock-mariadb-template-" + server_version() + "-" + std::to_string(::geteuid()),
      "data", build_template);
}

}  // namespace

MariaDbServer::MariaDbServer() : owner_(::getpid()) {
  require_packages();
  const std::string from = template_dir();
  dir_ = make_temp_dir("distlock-mariadb-run-");
  start_in_dir(
      "mariadbd", process_, dir_, kPortAttempts,
      [&] {
        run_capture({"cp", "-a", from + "/data", dir_ + "/data"}, milliseconds(60000));
      },
      [this] {
        port_ = pick_free_ports(1)[0];
        return launch();
      },
      [this] { return log_tail(); });
}

MariaDbServer::~MariaDbServer() {
  tear_down(owner_, process_, dir_, [this] { stop(); });
}

bool MariaDbServer::launch() {
  ServerLaunch l;
  l.program = "mariadbd";
  l.argv = server_argv(dir_, port_);
  l.log_path = log_path();
  l.port = port_;
  l.port_taken = "Address already in use";
  l.ready_bound = kReadyBound;
  l.ready = [this] { return wait_for_root(process_, socket_path()); };
  return launch_server(process_, l);
}

std::string MariaDbServer::uri() const {
  return std::string("mysql://") + kUser + ":" + kPassword + "@" + host_ + ":" +
         std::to_string(port_) + "/" + kDatabase;
}

ClientOptions MariaDbServer::options() const {
  ClientOptions o;
  o.backend = ClientOptions::Backend::mysql;
  o.host = host_;
  o.port = port_;
  o.username = kUser;
  o.password = kPassword;
  o.database = kDatabase;
  return o;
}

std::optional<std::string> MariaDbServer::root_query(const std::string& sql) const {
  return run_query(root_session(socket_path(), 5).get(), sql);
}

void MariaDbServer::kill_connection(std::int64_t id) const {
  root_query("KILL " + std::to_string(id));
}

void MariaDbServer::start() {
  if (running()) throw std::logic_error("MariaDbServer::start: already running");
  if (!launch()) {
    throw std::runtime_error("mariadbd: port " + std::to_string(port_) +
                             " was taken meanwhile; log:\n" + log_tail());
  }
}

void MariaDbServer::stop() {
  stop_process(process_);
}

void MariaDbServer::kill() {
  process_.kill_and_reap();
}

void MariaDbServer::restart() {
  stop();
  start();
}

std::string MariaDbServer::log_tail(std::size_t lines) const {
  return tail(read_from(log_path(), 0), lines);
}

}  // namespace distlock::test
