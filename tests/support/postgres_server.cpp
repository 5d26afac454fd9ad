#include "support/postgres_server.hpp"

#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "support/fixture_io.hpp"
#include "support/free_ports.hpp"
#include "support/server_dir.hpp"

namespace distlock::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr std::chrono::seconds kReadyBound{30};
constexpr std::chrono::seconds kStopBound{10};
constexpr std::chrono::seconds kInitBound{120};
constexpr int kPortAttempts = 5;
constexpr const char* kPackages = "install the packages postgresql and libpq-dev";

struct Installation {
  std::string version;  // "15"
  std::string bin;      // "/usr/lib/postgresql/15/bin"
};

// The newest /usr/lib/postgresql/<version>/bin holding initdb and postgres.
Installation find_installation() {
  Installation best;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string version = entry.path().filename().string();
    const std::string bin = entry.path().string() + "/bin";
    if (!fs::exists(bin + "/initdb") || !fs::exists(bin + "/postgres")) continue;
    const auto number = [](const std::string& v) { return std::atoi(v.c_str()); };
    if (best.version.empty() || number(version) > number(best.version)) best = {version, bin};
  }
  if (best.version.empty()) {
    throw std::runtime_error(
        "PostgreSQL server not found (no /usr/lib/postgresql/<version>/bin/postgres): " +
        std::string(kPackages));
  }
  return best;
}

// Who runs initdb and postgres: ourselves, or, as root (which PostgreSQL
// refuses), the user postgres, else nobody.
struct RunAs {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

RunAs run_as() {
  RunAs r;
  r.uid = ::geteuid();
  r.gid = ::getegid();
  if (r.uid != 0) return r;
  const passwd* pw = ::getpwnam("postgres");
  if (!pw) pw = ::getpwnam("nobody");
  if (!pw)
    throw std::runtime_error("running as root, and no user postgres or nobody to run postgres");
  return RunAs{true, pw->pw_uid, pw->pw_gid};
}

// The command prefix that runs a program as `who`. setpriv execs the
// program, so the pid stays the one process.hpp tracks, and --pdeathsig puts
// back the parent-death signal that changing the uid clears.
std::vector<std::string> as_user(const RunAs& who, std::vector<std::string> argv) {
  if (!who.switch_user) return argv;
  std::vector<std::string> full{"setpriv",
                                "--reuid=" + std::to_string(who.uid),
                                "--regid=" + std::to_string(who.gid),
                                "--clear-groups",
                                "--pdeathsig=SIGKILL",
                                "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

void chown_to(const std::string& path, const RunAs& who) {
  if (who.switch_user && ::chown(path.c_str(), who.uid, who.gid) != 0) {
    throw std::system_error(errno, std::generic_category(), "chown " + path);
  }
}

std::string sql_literal(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// The initdb'd data directory every server copies, built once per machine,
// version and user: initdb takes seconds, a copy a fraction of one.
std::string template_dir(const Installation& pg, const RunAs& who) {
  const std::string path =
      "/tmp/distlock-pg-template-" + pg.version + "-" + std::to_string(who.uid);
  return build_template_once(path, "PG_VERSION", [&pg, &who](const std::string& tmp) {
    run_capture(as_user(who, {pg.bin + "/initdb", "-D", tmp, "-U", "postgres", "--auth-local=trust",
                              "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
                              "--no-instructions", "--wal-segsize=1"}),
                kInitBound);
    // The role and database, in single-user mode: no server, no port. What
    // every server copies is kept small, as the copy is most of a start: 1 MB
    // WAL segments, and no database "postgres".
    const std::string script = tmp + ".sql";
    {
      std::ofstream out(script);
      out << "CREATE ROLE " << PostgresServer::kUser << " LOGIN PASSWORD "
          << sql_literal(PostgresServer::kPassword) << "\nCREATE DATABASE "
          << PostgresServer::kDatabase << " OWNER " << PostgresServer::kUser
          << "\nDROP DATABASE postgres\n";
    }
    std::vector<std::string> argv{"sh", "-c", "exec \"$@\" < " + script, "sh"};
    // exit_on_error: a failed statement ends single-user mode with a non-zero
    // status (it would otherwise only be logged to stderr).
    for (auto& a : as_user(who, {pg.bin + "/postgres", "--single", "-F", "-c", "exit_on_error=on",
                                 "-D", tmp, "template1"})) {
      argv.push_back(std::move(a));
    }
    run_capture(argv, kInitBound);
    fs::remove(script);
  });
}

struct PgConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
struct PgResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};

}  // namespace

PostgresServer::PostgresServer() : owner_(::getpid()) {
  const Installation pg = find_installation();
  const RunAs who = run_as();
  const std::string source = template_dir(pg, who);
  dir_ = make_temp_dir("distlock-pg-");
  start_in_dir(
      "postgres", process_, dir_, kPortAttempts,
      [&] {
        chown_to(dir_, who);
        run_capture({"cp", "-a", source, dir_ + "/data"}, kInitBound);
      },
      [this] {
        port_ = pick_free_ports(1)[0];
        return launch();
      },
      [this] { return log_tail(); });
}

PostgresServer::~PostgresServer() {
  tear_down(owner_, process_, dir_, [this] { stop(); });
}

bool PostgresServer::launch() {
  const Installation pg = find_installation();
  ServerLaunch l;
  l.program = "postgres";
  l.argv = as_user(run_as(), {pg.bin + "/postgres",
                              "-D",
                              dir_ + "/data",
                              "-p",
                              std::to_string(port_),
                              "-c",
                              "listen_addresses=127.0.0.1",
                              "-c",
                              "unix_socket_directories=" + dir_,
                              "-c",
                              "fsync=off",
                              "-c",
                              "synchronous_commit=off",
                              "-c",
                              "full_page_writes=off",
                              "-c",
                              "shared_buffers=16MB",
                              "-c",
                              "max_connections=60",
                              "-c",
                              "logging_collector=off"});
  l.log_path = log_path();
  l.port = port_;
  l.port_taken = "could not bind";
  l.ready_bound = kReadyBound;
  l.ready = [this] { return wait_until_ready(); };
  return launch_server(process_, l);
}

// Ready once a ping over TCP says the server accepts connections; the ping
// needs no password, so it proves nothing about authentication.
bool PostgresServer::wait_until_ready() {
  const std::string port = std::to_string(port_);
  const char* keys[] = {"host", "port", "dbname", "connect_timeout", nullptr};
  const char* values[] = {"127.0.0.1", port.c_str(), kDatabase, "2", nullptr};
  return distlock::test::wait_until_ready(process_, kReadyBound, milliseconds(10), [&] {
    return PQpingParams(keys, values, 0) == PQPING_OK;
  });
}

std::string PostgresServer::uri() const {
  return std::string("postgresql://") + kUser + ":" + percent_encoded(kPassword) +
         "@127.0.0.1:" + std::to_string(port_) + "/" + kDatabase;
}

ClientOptions PostgresServer::options() const {
  ClientOptions o;
  o.backend = ClientOptions::Backend::postgresql;
  o.host = "127.0.0.1";
  o.port = port_;
  o.username = kUser;
  o.password = kPassword;
  o.database = kDatabase;
  return o;
}

std::string PostgresServer::sql(const std::string& sql) const {
  const std::string port = std::to_string(port_);
  const char* keys[] = {"host", "port", "user", "dbname", "connect_timeout", nullptr};
  const char* values[] = {dir_.c_str(), port.c_str(), "postgres", kDatabase, "10", nullptr};
  const std::unique_ptr<PGconn, PgConnDeleter> conn(PQconnectdbParams(keys, values, 0));
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
    throw std::runtime_error("psql to PostgreSQL on port " + port +
                             " failed: " + (conn ? PQerrorMessage(conn.get()) : "out of memory"));
  }
  const std::unique_ptr<PGresult, PgResultDeleter> res(PQexec(conn.get(), sql.c_str()));
  const ExecStatusType status = PQresultStatus(res.get());
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    throw std::runtime_error("`" + sql + "` failed: " + PQresultErrorMessage(res.get()));
  }
  if (PQntuples(res.get()) == 0 || PQnfields(res.get()) == 0 || PQgetisnull(res.get(), 0, 0)) {
    return "";
  }
  return PQgetvalue(res.get(), 0, 0);
}

bool PostgresServer::terminate_backend(std::int64_t pid) const {
  return sql("SELECT pg_terminate_backend(" + std::to_string(pid) + ")") == "t";
}

void PostgresServer::stop() {
  if (!process_.running()) return;
  process_.signal(SIGINT);
  if (!process_.wait_for_exit(kStopBound)) process_.kill_and_reap();
}

void PostgresServer::start() {
  if (process_.running()) throw std::logic_error("postgres is running");
  if (!launch()) {
    throw std::runtime_error("postgres could not bind port " + std::to_string(port_) +
                             " again; log:\n" + log_tail());
  }
}

void PostgresServer::restart() {
  stop();
  start();
}

std::string PostgresServer::log_tail(std::size_t lines) const {
  return tail(read_from(log_path(), 0), lines);
}

}  // namespace distlock::test
