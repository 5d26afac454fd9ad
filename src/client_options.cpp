// ClientOptions built from a URI, and the checks a Client runs on its
// options before it connects.
#include "client_options.hpp"

#include <chrono>
#include <string>
#include <string_view>

#include "distlock/client_options.hpp"
#include "distlock/error.hpp"
#include "net/uri_parser.hpp"
#include "net/uri_text.hpp"
#include "net/zk_path.hpp"

namespace distlock {

ClientOptions ClientOptions::from_uri(std::string_view uri) {
  return net::UriParser(uri).parse();
}

namespace {

[[noreturn]] void bad(const std::string& what) {
  throw Error(errc::invalid_argument, what);
}

// Backend::zookeeper: the ensemble, session and chroot. The Redis-only fields
// (deployment, db, sentinel_*, replica acknowledgement, coalesce, ...) are
// ignored, except the two that would change how the Client connects.
void validate_zookeeper(const ClientOptions& o) {
  if (o.seeds.empty()) bad("ClientOptions: a ZooKeeper backend needs seeds (the servers)");
  for (const auto& seed : o.seeds) {
    if (seed.host.empty()) bad("ClientOptions: a ZooKeeper seed has an empty host");
    if (seed.port == 0) bad("ClientOptions: ZooKeeper seed '" + seed.host + "' has port 0");
  }
  if (o.session_timeout < std::chrono::milliseconds(1) ||
      o.session_timeout > std::chrono::hours(1)) {
    bad("ClientOptions: session_timeout must be in [1 ms, 1 h], got " +
        std::to_string(o.session_timeout.count()) + " ms");
  }
  if (!o.chroot.empty()) {
    if (const auto problem = net::zk_path_problem(o.chroot)) {
      bad("ClientOptions: chroot '" + uri_text::escaped(o.chroot) + "' " + *problem +
          (o.chroot == "/" ? " (an empty chroot is the root)" : ""));
    }
  }
  if (o.username.empty() != o.password.empty()) {
    bad(std::string("ClientOptions: digest authentication needs user:password (") +
        (o.username.empty() ? "password without a username" : "username without a password") + ")");
  }
  if (o.username.find(':') != std::string::npos) {
    bad("ClientOptions: the digest username contains ':' (ZooKeeper splits user:password at "
        "the first ':')");
  }
  if (!o.unix_path.empty()) {
    bad("ClientOptions: unix_path is a Redis option (a ZooKeeper backend connects to seeds)");
  }
  if (o.tls.enabled) {
    throw Error(errc::not_supported,
                "ClientOptions: TLS to ZooKeeper is not supported yet (tls.enabled is true)");
  }
}

// Backend::mysql and Backend::postgresql: one server at host:port and the
// connection pool. The Redis-only fields that only tune Redis (db, coalesce,
// replica acknowledgement, ...) and session_timeout are ignored; those that
// name other servers or another way to reach one are refused, because the
// Client would silently not use them.
void validate_sql(const ClientOptions& o) {
  const std::string backend =
      o.backend == ClientOptions::Backend::mysql ? "a MySQL backend" : "a PostgreSQL backend";
  if (o.host.empty()) bad("ClientOptions: host is empty");
  if (o.port == 0) bad("ClientOptions: port 0 is not a valid port");
  if (!o.unix_path.empty()) {
    bad("ClientOptions: unix_path is a Redis option (" + backend + " connects to host:port)");
  }
  if (!o.seeds.empty() || o.deployment != ClientOptions::Deployment::standalone) {
    bad("ClientOptions: seeds and a cluster or sentinel deployment are Redis and ZooKeeper "
        "settings (" +
        backend + " connects to one server, host:port)");
  }
  if (!o.sentinel_master.empty() || !o.sentinel_username.empty() || !o.sentinel_password.empty()) {
    bad("ClientOptions: sentinel_master, sentinel_username and sentinel_password are Redis "
        "Sentinel settings (" +
        backend + " connects to one server, host:port)");
  }
  if (!o.chroot.empty()) bad("ClientOptions: chroot is a ZooKeeper option (" + backend + ")");
  // The client libraries take C strings: a NUL would cut the value short.
  for (const auto& [field, value] :
       {std::pair{"username", &o.username}, std::pair{"password", &o.password},
        std::pair{"database", &o.database}}) {
    if (value->find('\0') != std::string::npos) {
      bad(std::string("ClientOptions: ") + field + " contains a NUL byte");
    }
  }
  if (o.max_connections < 1 || o.max_connections > 10'000) {
    bad("ClientOptions: max_connections must be in [1, 10000], got " +
        std::to_string(o.max_connections));
  }
  if (o.connection_check_interval < std::chrono::milliseconds(1) ||
      o.connection_check_interval > std::chrono::hours(1)) {
    bad("ClientOptions: connection_check_interval must be in [1 ms, 1 h], got " +
        std::to_string(o.connection_check_interval.count()) + " ms");
  }
}

// Backend::redis, where it connects: checked before the fields both backends
// use (validate_redis_rest after them), in the order validate() always had.
void validate_redis_endpoint(const ClientOptions& o) {
  if (o.deployment != ClientOptions::Deployment::standalone) {
    if (o.seeds.empty()) bad("ClientOptions: a cluster or sentinel deployment needs seeds");
    if (o.deployment == ClientOptions::Deployment::cluster && o.db != 0) {
      bad("ClientOptions: Redis Cluster has only database 0, got db " + std::to_string(o.db));
    }
  } else if (o.unix_path.empty()) {
    if (o.host.empty()) bad("ClientOptions: host is empty");
    if (o.port == 0) bad("ClientOptions: port 0 is not a valid port");
  } else if (o.unix_path.front() != '/') {
    bad("ClientOptions: unix_path must be absolute: '" + o.unix_path + "'");
  }
  if (o.db < 0) bad("ClientOptions: db must be >= 0, got " + std::to_string(o.db));
}

void validate_redis_rest(const ClientOptions& o) {
  if (o.min_replicas_acked < 0) {
    bad("ClientOptions: min_replicas_acked must be >= 0, got " +
        std::to_string(o.min_replicas_acked));
  }
  if (o.min_replicas_acked > 0 &&
      (o.replica_ack_timeout.count() <= 0 || o.replica_ack_timeout >= o.command_timeout)) {
    bad("ClientOptions: replica_ack_timeout must be positive and below command_timeout");
  }
  using Sharded = ClientOptions::ShardedPubsub;
  if (o.sharded_pubsub != Sharded::automatic && o.sharded_pubsub != Sharded::on &&
      o.sharded_pubsub != Sharded::off) {
    bad("ClientOptions: sharded_pubsub must be automatic, on or off, got " +
        std::to_string(static_cast<int>(o.sharded_pubsub)));
  }
  if (!o.username.empty() && o.password.empty()) {
    bad("ClientOptions: username '" + o.username + "' given without a password");
  }
  if (!o.chroot.empty()) bad("ClientOptions: chroot is a ZooKeeper option (backend is redis)");
}

}  // namespace

void validate(const ClientOptions& o) {
  using Backend = ClientOptions::Backend;
  const bool redis = o.backend == Backend::redis;
  const bool zookeeper = o.backend == Backend::zookeeper;
  const bool sql = o.backend == Backend::mysql || o.backend == Backend::postgresql;
  if (!redis && !zookeeper && !sql) {
    bad("ClientOptions: backend must be redis, zookeeper, mysql or postgresql, got " +
        std::to_string(static_cast<int>(o.backend)));
  }
  if (zookeeper) {
    validate_zookeeper(o);
  } else if (sql) {
    validate_sql(o);
  } else {
    validate_redis_endpoint(o);
  }
  if (o.connect_timeout.count() <= 0) bad("ClientOptions: connect_timeout must be positive");
  if (o.command_timeout.count() <= 0) bad("ClientOptions: command_timeout must be positive");
  if (o.reconnect_min_delay.count() <= 0 || o.reconnect_max_delay < o.reconnect_min_delay) {
    bad("ClientOptions: reconnect delays must satisfy 0 < min <= max");
  }
  if (o.max_queued == 0) bad("ClientOptions: max_queued must be at least 1");
  if (!(o.clock_drift_factor >= 0.0 && o.clock_drift_factor < 0.5)) {
    bad("ClientOptions: clock_drift_factor must be in [0, 0.5), got " +
        std::to_string(o.clock_drift_factor));
  }
  if (o.watchdog_timeout.count() < 30) {
    bad("ClientOptions: watchdog_timeout must be at least 30 ms (renewal runs every third)");
  }
  if (o.long_hold_warning.count() < 0) bad("ClientOptions: long_hold_warning must be >= 0");
  if (redis) validate_redis_rest(o);
}

}  // namespace distlock
