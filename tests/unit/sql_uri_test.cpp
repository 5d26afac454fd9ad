// The SQL backends' options: ClientOptions::from_uri for mysql:// (mariadb://)
// and postgresql:// (postgres://) URIs (the server, credentials, database,
// options and TLS settings, and the malformed ones), and validate() of MySQL
// and PostgreSQL options built directly.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "client_options.hpp"
#include "distlock/client_options.hpp"
#include "distlock/error.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using Backend = ClientOptions::Backend;

// A password no message may contain, in every URI that fails.
const std::string kPassword = "Pw7xSecret";

std::string my(const std::string& rest) {
  return "mysql://u:" + kPassword + "@" + rest;
}
std::string pg(const std::string& rest) {
  return "postgresql://u:" + kPassword + "@" + rest;
}

struct Good {
  std::string uri;
  Backend backend;
  std::function<void(ClientOptions&)> expect{};  // applied to the defaults
};

void tls_on(ClientOptions& o) {
  o.tls.enabled = true;
}

std::vector<Good> good_uris() {
  return {
      {"mysql://db", Backend::mysql, [](ClientOptions& o) { o.host = "db"; }},
      {"mysql://db/", Backend::mysql, [](ClientOptions& o) { o.host = "db"; }},
      {"MySQL://DB", Backend::mysql, [](ClientOptions& o) { o.host = "DB"; }},
      {"mariadb://db:3307/app", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         o.port = 3307;
         o.database = "app";
       }},
      {"mysql://alice:s3cr%40t%3A%2F@db.example.com/locks", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db.example.com";
         o.username = "alice";
         o.password = "s3cr@t:/";
         o.database = "locks";
       }},
      {"mysql://bob:pa@ss@db", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         o.username = "bob";
         o.password = "pa@ss";
       }},
      {"mysql://alice@db", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         o.username = "alice";
       }},
      {"mysql://:pw@db", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         o.password = "pw";
       }},
      {"mysql://[::1]", Backend::mysql, [](ClientOptions& o) { o.host = "::1"; }},
      {"mysql://[fe80::1]:3310/x", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "fe80::1";
         o.port = 3310;
         o.database = "x";
       }},
      {"mysql://db/my%20app%2Fl%C3%B6cks", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         o.database =
             "my app/l\xc3\xb6"
             "cks";
       }},
      {"mysql://db?connect_timeout_ms=250&command_timeout_ms=1000&max_connections=1&"
       "connection_check_interval_ms=1",
       Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         o.connect_timeout = 250ms;
         o.command_timeout = 1000ms;
         o.max_connections = 1;
         o.connection_check_interval = 1ms;
       }},
      {"mysql://db/?&max_connections=10000&connection_check_interval_ms=3600000&", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         o.max_connections = 10000;
         o.connection_check_interval = 1h;
       }},
      {"mysql://db?tls=true", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         tls_on(o);
       }},
      {"mysql://db?tls=false", Backend::mysql, [](ClientOptions& o) { o.host = "db"; }},
      {"mysql://db?ca_file=/ca.pem&cert_file=c.pem&key_file=k.pem&verify_peer=false&"
       "server_name=db.local&tls=true",
       Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         tls_on(o);
         o.tls.ca_file = "/ca.pem";
         o.tls.cert_file = "c.pem";
         o.tls.key_file = "k.pem";
         o.tls.verify_peer = false;
         o.tls.server_name = "db.local";
       }},
      {"mysql://db?ssl-mode=DISABLED", Backend::mysql, [](ClientOptions& o) { o.host = "db"; }},
      {"mysql://db?ssl-mode=REQUIRED", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         tls_on(o);
         o.tls.verify_peer = false;
       }},
      {"mysql://db?ssl_mode=required&ca_file=/ca.pem", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         tls_on(o);
         o.tls.verify_peer = false;
         o.tls.ca_file = "/ca.pem";
       }},
      {"mysql://db?ssl-mode=VERIFY_CA", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         tls_on(o);
       }},
      {"mysql://db?ssl_mode=Verify_Identity", Backend::mysql,
       [](ClientOptions& o) {
         o.host = "db";
         tls_on(o);
       }},
      {"postgresql://pg", Backend::postgresql,
       [](ClientOptions& o) {
         o.host = "pg";
         o.port = 5432;
       }},
      {"postgres://pg:5433/app", Backend::postgresql,
       [](ClientOptions& o) {
         o.host = "pg";
         o.port = 5433;
         o.database = "app";
       }},
      {"PostgreSQL://carol:pw%25@10.0.0.5/a%2Fb", Backend::postgresql,
       [](ClientOptions& o) {
         o.host = "10.0.0.5";
         o.port = 5432;
         o.username = "carol";
         o.password = "pw%";
         o.database = "a/b";
       }},
      {"postgresql://bob@[::1]:5440/locks?sslmode=verify-full&ca_file=/ca.pem&max_connections=64",
       Backend::postgresql,
       [](ClientOptions& o) {
         o.host = "::1";
         o.port = 5440;
         o.username = "bob";
         o.database = "locks";
         tls_on(o);
         o.tls.ca_file = "/ca.pem";
         o.max_connections = 64;
       }},
      {"postgresql://pg?sslmode=disable", Backend::postgresql,
       [](ClientOptions& o) {
         o.host = "pg";
         o.port = 5432;
       }},
      {"postgresql://pg?sslmode=require", Backend::postgresql,
       [](ClientOptions& o) {
         o.host = "pg";
         o.port = 5432;
         tls_on(o);
         o.tls.verify_peer = false;
       }},
      {"postgresql://pg?sslmode=verify-ca&server_name=pg.local", Backend::postgresql,
       [](ClientOptions& o) {
         o.host = "pg";
         o.port = 5432;
         tls_on(o);
         o.tls.server_name = "pg.local";
       }},
      {"postgres://pg?tls=true&verify_peer=false&cert_file=c.pem", Backend::postgresql,
       [](ClientOptions& o) {
         o.host = "pg";
         o.port = 5432;
         tls_on(o);
         o.tls.verify_peer = false;
         o.tls.cert_file = "c.pem";
       }},
  };
}

TEST(SqlUri, ParsesEveryWellFormedUriIntoTheExpectedFields) {
  for (const Good& good : good_uris()) {
    SCOPED_TRACE(good.uri);
    ClientOptions want;
    want.backend = good.backend;
    want.port = good.backend == Backend::mysql ? 3306 : 5432;
    if (good.expect) good.expect(want);
    ClientOptions got;
    ASSERT_NO_THROW(got = ClientOptions::from_uri(good.uri));
    EXPECT_EQ(got.backend, want.backend);
    EXPECT_EQ(got.host, want.host);
    EXPECT_EQ(got.port, want.port);
    EXPECT_EQ(got.username, want.username);
    EXPECT_EQ(got.password, want.password);
    EXPECT_EQ(got.database, want.database);
    EXPECT_EQ(got.tls.enabled, want.tls.enabled);
    EXPECT_EQ(got.tls.verify_peer, want.tls.verify_peer);
    EXPECT_EQ(got.tls.ca_file, want.tls.ca_file);
    EXPECT_EQ(got.tls.ca_dir, want.tls.ca_dir);
    EXPECT_EQ(got.tls.cert_file, want.tls.cert_file);
    EXPECT_EQ(got.tls.key_file, want.tls.key_file);
    EXPECT_EQ(got.tls.server_name, want.tls.server_name);
    EXPECT_EQ(got.connect_timeout, want.connect_timeout);
    EXPECT_EQ(got.command_timeout, want.command_timeout);
    EXPECT_EQ(got.max_connections, want.max_connections);
    EXPECT_EQ(got.connection_check_interval, want.connection_check_interval);
    EXPECT_EQ(got.deployment, ClientOptions::Deployment::standalone);
    EXPECT_TRUE(got.seeds.empty());
    EXPECT_TRUE(got.unix_path.empty());
    EXPECT_TRUE(got.chroot.empty());
    EXPECT_EQ(got.db, 0);
    EXPECT_NO_THROW(validate(got)) << "from_uri returned options validate() refuses";
  }
}

TEST(SqlUri, LeavesTheDefaultsOfEverythingTheUriDoesNotSay) {
  const ClientOptions o = ClientOptions::from_uri("mysql://db");
  EXPECT_EQ(o.max_connections, 16u);
  EXPECT_EQ(o.connection_check_interval, 5000ms);
  EXPECT_EQ(o.connect_timeout, 5000ms);
  EXPECT_EQ(o.command_timeout, 5000ms);
  EXPECT_FALSE(o.tls.enabled) << "TLS is off unless the URI turns it on";
  EXPECT_TRUE(o.tls.verify_peer);
  EXPECT_EQ(ClientOptions::from_uri("postgres://pg").port, 5432);
}

struct Bad {
  std::string uri;
  std::string problem;                             // the message must contain this
  std::vector<std::string> secrets = {kPassword};  // ... and none of these
};

const std::string kMySqlOptions =
    "(expected connect_timeout_ms, command_timeout_ms, max_connections, "
    "connection_check_interval_ms, tls, ca_file, cert_file, key_file, verify_peer, server_name "
    "or ssl-mode)";
const std::string kPostgreSqlOptions =
    "(expected connect_timeout_ms, command_timeout_ms, max_connections, "
    "connection_check_interval_ms, tls, ca_file, cert_file, key_file, verify_peer, server_name "
    "or sslmode)";

std::vector<Bad> bad_uris() {
  const std::string my_tls_off =
      "requires TLS, which this URI leaves off (add tls=true or ssl-mode=REQUIRED, VERIFY_CA or "
      "VERIFY_IDENTITY)";
  const std::string pg_tls_off =
      "requires TLS, which this URI leaves off (add tls=true or sslmode=require, verify-ca or "
      "verify-full)";
  std::vector<Bad> bad = {
      // The server.
      {"mysql:u:" + kPassword + "@db", "missing '//' after 'mysql:'"},
      {my("db1,db2"), "a MySQL URI names one server (got a comma-separated host list)"},
      {pg("pg1:5432,pg2"), "a PostgreSQL URI names one server"},
      {my(""), "missing host"},
      {pg(":5432/app"), "missing host"},
      {my("db:0"), "port 0 out of range 1..65535"},
      {pg("pg:70000"), "port 70000 out of range 1..65535"},
      {my("db:x"), "port 'x' is not a number"},
      {my("::1"), "an IPv6 address must be enclosed in brackets, as in mysql://[::1]:3306"},
      {pg("::1:5432"),
       "an IPv6 address must be enclosed in brackets, as in postgresql://[::1]:5432"},
      {my("[::1"), "unterminated IPv6 address"},
      {my("[]"), "empty IPv6 address"},
      {pg("[zz]:5432"), "invalid IPv6 address 'zz'"},
      {my("d b"), "invalid character ' ' in host"},
      // Credentials and the database.
      {"mysql://u%00x:" + kPassword + "@db", "the user name contains a NUL byte"},
      {"mysql://u:Pw7x%00Secret@db", "the password contains a NUL byte", {"Pw7x", "Secret"}},
      {"postgresql://u:Pw7x%zzSecret@pg",
       "invalid percent-encoding in the password",
       {"Pw7x", "Secret"}},
      {"postgresql://u%g0:" + kPassword + "@pg", "invalid percent-encoding in the user name"},
      {my("db/app/x"), "unexpected path '/app/x' (the database name is one path segment"},
      {pg("pg/app/"), "unexpected path '/app/'"},
      {my("db/a%zz"), "invalid percent-encoding in the database name"},
      {my("db/a%00b"), "the database name contains a NUL byte"},
      {pg("pg/a%0Ab"), "database name 'a\\x0ab' contains a control character"},
      {my("db/" + kPassword + "/x"), "unexpected path '/***/x'"},
      {"mysql://u:Pw7x/Secret@db", "is not a number", {"Pw7x", "Secret"}},
      // Pool and timeouts.
      {my("db?max_connections=0"), "max_connections '0' is not a number of connections 1..10000"},
      {pg("pg?max_connections=10001"), "max_connections '10001' is not a number of connections"},
      {my("db?max_connections=-1"), "max_connections '-1' is not a number of connections"},
      {my("db?max_connections=99999999999999999999"), "is not a number of connections 1..10000"},
      {my("db?max_connections=4x"), "max_connections '4x' is not a number of connections"},
      {my("db?max_connections="), "option 'max_connections' has no value"},
      {my("db?max_connections"), "option 'max_connections' has no value"},
      {my("db?max_connections=1&max_connections=2"), "option 'max_connections' given twice"},
      {my("db?connection_check_interval_ms=0"),
       "connection_check_interval_ms '0' is not a positive number of milliseconds"},
      {pg("pg?connection_check_interval_ms=3600001"),
       "connection_check_interval_ms '3600001' out of range 1..3600000"},
      {my("db?connect_timeout_ms=0"), "connect_timeout_ms '0' is not a positive number"},
      {pg("pg?command_timeout_ms=abc"), "command_timeout_ms 'abc' is not a positive number"},
      {pg("pg?command_timeout_ms=99999999999"), "out of range 1..2147483647"},
      // TLS: settings need TLS on; one switch and one verify_peer setter.
      {my("db?tls=yes"), "tls 'yes' must be true or false"},
      {my("db?tls=true&verify_peer=maybe"), "verify_peer 'maybe' must be true or false"},
      {my("db?ca_file=/ca.pem"), "option 'ca_file' " + my_tls_off},
      {my("db?verify_peer=false"), "option 'verify_peer' " + my_tls_off},
      {my("db?server_name=db.local"), "option 'server_name' " + my_tls_off},
      {my("db?tls=false&key_file=k.pem&cert_file=c.pem"), "option 'key_file' " + my_tls_off},
      {my("db?ssl-mode=DISABLED&ca_file=/ca.pem"), "option 'ca_file' " + my_tls_off},
      {pg("pg?cert_file=c.pem"), "option 'cert_file' " + pg_tls_off},
      {pg("pg?sslmode=disable&server_name=pg"), "option 'server_name' " + pg_tls_off},
      {my("db?tls=true&key_file=k.pem"), "option key_file requires cert_file"},
      {my("db?tls=true&ssl-mode=REQUIRED"),
       "options 'tls' and 'ssl-mode' both set TLS on or off (give one)"},
      {my("db?ssl-mode=REQUIRED&ssl_mode=REQUIRED"),
       "options 'ssl-mode' and 'ssl_mode' both set TLS on or off (give one)"},
      {pg("pg?sslmode=require&tls=true"), "options 'sslmode' and 'tls' both set TLS on or off"},
      {pg("pg?sslmode=require&verify_peer=true"),
       "options 'sslmode' and 'verify_peer' both set verify_peer (give one)"},
      {pg("pg?tls=true&verify_peer=true&sslmode=require"),
       "options 'tls' and 'sslmode' both set TLS on or off"},
      {my("db?tls=true&tls=false"), "option 'tls' given twice"},
      {pg("pg?sslmode=prefer"),
       "sslmode 'prefer' is not supported (expected disable, require, verify-ca or verify-full; "
       "distlock never falls back to an unencrypted connection)"},
      {pg("pg?sslmode=allow"), "sslmode 'allow' is not supported"},
      {pg("pg?sslmode=REQUIRE"),
       "sslmode 'REQUIRE' is not an ssl mode (expected disable, require, verify-ca or "
       "verify-full)"},
      {my("db?ssl-mode=PREFERRED"),
       "ssl-mode 'PREFERRED' is not supported (expected DISABLED, REQUIRED, VERIFY_CA or "
       "VERIFY_IDENTITY;"},
      {my("db?ssl_mode=preferred"), "ssl_mode 'preferred' is not supported"},
      {my("db?ssl-mode=ON"), "ssl-mode 'ON' is not an ssl mode (expected DISABLED, REQUIRED, "},
      {my("db?sslmode=require"), "option 'sslmode' is not a MySQL option " + kMySqlOptions},
      {pg("pg?ssl-mode=REQUIRED"),
       "option 'ssl-mode' is not a PostgreSQL option " + kPostgreSqlOptions},
      {pg("pg?ssl_mode=REQUIRED"), "option 'ssl_mode' is not a PostgreSQL option"},
  };
  // Every Redis and ZooKeeper option, and a few names of the servers' own
  // URI forms, refused by name; a value equal to the password stays hidden.
  for (const char* name :
       {"db", "client_name", "coalesce", "preload_scripts", "sharded_pubsub", "ca_dir",
        "min_replicas_acked", "replica_ack_timeout_ms", "sentinel_username", "sentinel_password",
        "session_timeout_ms", "password", "user", "dbname", "colour"}) {
    const std::string option = std::string("?") + name + "=" + kPassword;
    bad.push_back({my("db" + option),
                   "option '" + std::string(name) + "' is not a MySQL option " + kMySqlOptions});
    bad.push_back(
        {pg("pg/app" + option),
         "option '" + std::string(name) + "' is not a PostgreSQL option " + kPostgreSqlOptions});
  }
  return bad;
}

std::string rejection_of(const std::string& uri) {
  try {
    (void)ClientOptions::from_uri(uri);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument) << uri;
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << uri;
  return {};
}

TEST(SqlUri, RejectsEveryMalformedUriWithAMessageNamingTheProblem) {
  for (const Bad& bad : bad_uris()) {
    const std::string message = rejection_of(bad.uri);
    const char* prefix =
        bad.uri.starts_with("mysql") ? "invalid MySQL URI: " : "invalid PostgreSQL URI: ";
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
    EXPECT_NE(message.find(bad.problem), std::string::npos)
        << "uri: " << bad.uri << "\nmessage: " << message;
  }
}

TEST(SqlUri, NeverPutsThePasswordIntoAnErrorMessage) {
  for (const Bad& bad : bad_uris()) {
    const std::string message = rejection_of(bad.uri);
    for (const std::string& secret : bad.secrets) {
      EXPECT_EQ(message.find(secret), std::string::npos)
          << "uri: " << bad.uri << "\nmessage: " << message;
    }
  }
}

TEST(SqlUri, RedisUrisRefuseThePoolOptionsAndUnknownSchemesListTheSqlOnes) {
  EXPECT_NE(rejection_of("redis://h?max_connections=4")
                .find("invalid Redis URI: option 'max_connections' requires a mysql:// or "
                      "postgresql:// URI"),
            std::string::npos);
  EXPECT_NE(rejection_of("rediss://h?connection_check_interval_ms=4")
                .find("option 'connection_check_interval_ms' requires a mysql:// or"),
            std::string::npos);
  EXPECT_NE(rejection_of("zookeeper://zk?max_connections=4")
                .find("option 'max_connections' is not a ZooKeeper option"),
            std::string::npos);
  EXPECT_NE(rejection_of("mysql-cluster://db").find("unknown scheme 'mysql-cluster'"),
            std::string::npos);
  EXPECT_NE(rejection_of("pgsql://db").find("zookeeper, mysql, mariadb, postgresql or postgres)"),
            std::string::npos);
  EXPECT_NE(rejection_of("db:3306").find("unknown scheme 'db'"), std::string::npos);
}

ClientOptions sql_options(Backend backend) {
  ClientOptions o;
  o.backend = backend;
  o.host = "db";
  o.port = backend == Backend::mysql ? 3306 : 5432;
  return o;
}

// What validate() throws for `o` (code and message), or nullopt.
std::optional<std::pair<std::error_code, std::string>> refusal_of(const ClientOptions& o) {
  try {
    validate(o);
  } catch (const Error& e) {
    return std::pair{e.code(), std::string(e.what())};
  }
  return std::nullopt;
}

TEST(SqlOptions, ValidateAcceptsTheBoundsAndIgnoresTheRedisAndZooKeeperTuning) {
  for (const Backend backend : {Backend::mysql, Backend::postgresql}) {
    ClientOptions o = sql_options(backend);
    EXPECT_EQ(refusal_of(o), std::nullopt);
    o.max_connections = 1;
    o.connection_check_interval = 1ms;
    o.username = "alice";  // without a password: trust or peer authentication
    o.database = "app";
    EXPECT_EQ(refusal_of(o), std::nullopt);
    o.max_connections = 10000;
    o.connection_check_interval = 1h;
    o.db = 3;
    o.coalesce = true;
    o.min_replicas_acked = 2;
    o.client_name = "";
    o.session_timeout = 0ms;
    o.tls.enabled = true;
    EXPECT_EQ(refusal_of(o), std::nullopt);
  }
}

TEST(SqlOptions, ValidateRefusesEachBadFieldNamingIt) {
  struct Case {
    std::string what;
    std::function<void(ClientOptions&)> change;
    std::string problem;
  };
  const std::string one_server = "connects to one server, host:port";
  const std::vector<Case> cases = {
      {"no connections", [](ClientOptions& o) { o.max_connections = 0; },
       "max_connections must be in [1, 10000], got 0"},
      {"too many connections", [](ClientOptions& o) { o.max_connections = 10001; },
       "max_connections must be in [1, 10000], got 10001"},
      {"check interval 0", [](ClientOptions& o) { o.connection_check_interval = 0ms; },
       "connection_check_interval must be in [1 ms, 1 h], got 0 ms"},
      {"check interval negative", [](ClientOptions& o) { o.connection_check_interval = -5ms; },
       "connection_check_interval must be in [1 ms, 1 h], got -5 ms"},
      {"check interval over 1 h", [](ClientOptions& o) { o.connection_check_interval = 1h + 1ms; },
       "connection_check_interval must be in [1 ms, 1 h], got 3600001 ms"},
      {"host empty", [](ClientOptions& o) { o.host.clear(); }, "host is empty"},
      {"port 0", [](ClientOptions& o) { o.port = 0; }, "port 0 is not a valid port"},
      {"unix_path", [](ClientOptions& o) { o.unix_path = "/run/mysqld/mysqld.sock"; },
       "unix_path is a Redis option"},
      {"seeds",
       [](ClientOptions& o) {
         o.seeds = {{"db2", 3306}};
       },
       one_server},
      {"cluster", [](ClientOptions& o) { o.deployment = ClientOptions::Deployment::cluster; },
       one_server},
      {"sentinel", [](ClientOptions& o) { o.deployment = ClientOptions::Deployment::sentinel; },
       one_server},
      {"sentinel master", [](ClientOptions& o) { o.sentinel_master = "m"; },
       "sentinel_master, sentinel_username and sentinel_password are Redis Sentinel settings"},
      {"sentinel password", [](ClientOptions& o) { o.sentinel_password = kPassword; },
       "are Redis Sentinel settings"},
      {"chroot", [](ClientOptions& o) { o.chroot = "/app"; }, "chroot is a ZooKeeper option"},
      {"NUL in password", [](ClientOptions& o) { o.password = std::string("Pw7x\0Secret", 11); },
       "password contains a NUL byte"},
      {"NUL in database", [](ClientOptions& o) { o.database = std::string("a\0b", 3); },
       "database contains a NUL byte"},
      {"NUL in username", [](ClientOptions& o) { o.username = std::string("a\0b", 3); },
       "username contains a NUL byte"},
      {"connect timeout 0", [](ClientOptions& o) { o.connect_timeout = 0ms; },
       "connect_timeout must be positive"},
  };
  for (const Backend backend : {Backend::mysql, Backend::postgresql}) {
    for (const Case& c : cases) {
      ClientOptions o = sql_options(backend);
      o.password = kPassword;
      c.change(o);
      const auto refusal = refusal_of(o);
      ASSERT_TRUE(refusal.has_value()) << c.what << ": accepted";
      EXPECT_EQ(refusal->first, make_error_code(errc::invalid_argument))
          << c.what << ": " << refusal->second;
      EXPECT_EQ(refusal->second.rfind("ClientOptions: ", 0), 0u) << refusal->second;
      EXPECT_NE(refusal->second.find(c.problem), std::string::npos)
          << c.what << ": " << refusal->second;
      EXPECT_EQ(refusal->second.find("Pw7x"), std::string::npos) << refusal->second;
      EXPECT_EQ(refusal->second.find("Secret"), std::string::npos) << refusal->second;
    }
  }
}

TEST(SqlOptions, ValidateLeavesThePoolFieldsUncheckedOnRedisAndZooKeeper) {
  ClientOptions redis;
  redis.max_connections = 0;
  redis.connection_check_interval = 0ms;
  EXPECT_EQ(refusal_of(redis), std::nullopt) << "the pool fields are not Redis fields";
  ClientOptions zookeeper = redis;
  zookeeper.backend = Backend::zookeeper;
  zookeeper.seeds = {{"zk", 2181}};
  EXPECT_EQ(refusal_of(zookeeper), std::nullopt) << "nor ZooKeeper fields";
}

}  // namespace
}  // namespace distlock
