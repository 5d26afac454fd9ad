/// \file
/// How a Client connects and behaves: ClientOptions and its URI form.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace distlock {

/// TLS settings of a connection (ClientOptions::tls); set from a rediss:// URI,
/// or from the TLS options of a mysql:// or postgresql:// URI (tls=true, sslmode=...).
struct TlsOptions {
  /// Connect with TLS (set by the rediss:// scheme).
  bool enabled = false;
  ///@{
  /// Verify the server certificate against ca_file / ca_dir, or the system's
  /// default trust store when both are empty. Default: true.
  bool verify_peer = true;
  std::string ca_file;
  std::string ca_dir;
  ///@}
  ///@{
  /// Client certificate and key, for servers with tls-auth-clients yes.
  std::string cert_file;
  std::string key_file;
  ///@}
  /// SNI and the name the certificate must match; defaults to the host.
  std::string server_name;
};

class LeaseLostEvent;

/// Passed to ClientOptions::on_long_hold once per holding held longer than
/// ClientOptions::long_hold_warning.
struct LongHoldEvent {
  std::string name;                    ///< the primitive's name
  std::string owner;                   ///< the owner id holding it
  std::chrono::milliseconds held_for;  ///< since its acquire was sent
};

/// Everything a Client is configured with; from_uri() fills it from a
/// URI. Each field's default is the one a Client gets when it is not set.
struct ClientOptions {
  ///@{
  /// TCP endpoint. Ignored when unix_path is set.
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  ///@}
  /// Path of a Unix domain socket; when non-empty the Client uses it.
  std::string unix_path;

  ///@{
  /// AUTH credentials. An empty username with a password sends `AUTH password`
  /// (the default user); both send `AUTH username password` (ACL).
  std::string username;
  std::string password;
  ///@}
  /// SELECT this database after connecting (0..N; the server decides N).
  int db = 0;
  /// Sent as CLIENT SETNAME after connecting; empty skips it.
  std::string client_name = "distlock";

  /// TLS; off unless the URI's scheme is rediss:// or a mysql:// or postgresql://
  /// URI turns it on.
  TlsOptions tls;

  /// How long the first connection (TCP + TLS + AUTH + SELECT) may take.
  std::chrono::milliseconds connect_timeout{5000};
  /// How long one command may wait for its reply, counted from when it was
  /// submitted. On expiry the call fails with errc::timeout; the connection
  /// stays up and discards the late reply.
  std::chrono::milliseconds command_timeout{5000};
  ///@{
  /// Reconnect backoff after a dropped connection: capped exponential with
  /// full jitter between these bounds.
  std::chrono::milliseconds reconnect_min_delay{20};
  std::chrono::milliseconds reconnect_max_delay{2000};
  ///@}
  /// Send SCRIPT LOAD of every distlock script in each data connection's
  /// handshake (its replies, errors included, are ignored), so that after a
  /// connect or reconnect no call meets NOSCRIPT. false: nothing is
  /// preloaded; a call whose script the server does not hold yet meets
  /// NOSCRIPT and is sent once more as EVAL (one more round trip, once per
  /// script and server), which suits a short-lived process that runs two or
  /// three scripts, such as the distlock CLI. Default true.
  bool preload_scripts = true;
  /// At most this many commands may be queued or in flight on one connection;
  /// past it calls fail at once with errc::queue_full.
  std::size_t max_queued = 1'000'000;

  /// Coalescing (docs/performance.md, "Coalescing"), off by default: script
  /// calls that would wait behind a call of this Client in flight to the
  /// same server (the same slot under Cluster) go out together when it is
  /// answered, as one batch call that applies each in order and answers each
  /// separately; each operation keeps its own reply, error, lease and token,
  /// and an idle connection sends a call at once. Measured on one pipelined
  /// connection it costs the server more per operation than it saves and
  /// keeps only one call in flight, so throughput falls (0.57-0.74x at 64
  /// threads): it pays only where a call's own cost dominates. URI option
  /// `coalesce=true|false`. Default false.
  bool coalesce = false;

  ///@{
  /// Sharded pub/sub on Redis Cluster (docs/topologies.md, "Sharded
  /// pub/sub"). `on`: waiters SSUBSCRIBE each channel on the master that
  /// owns its slot and the release scripts SPUBLISH, so an unlock reaches
  /// only that shard instead of every node over the cluster bus (Redisson
  /// 3.22+ does the same under its default shardedSubscriptionMode AUTO).
  /// `off`: classic SUBSCRIBE/PUBLISH. `automatic` (the default): on when
  /// every master the Client finds at connect runs Redis 7.0 or later,
  /// otherwise off. Every Client (and Redisson) waiting on a name must use
  /// the same mode: a sharded unlock does not wake a classic waiter. Only
  /// Cluster has shards: standalone and Sentinel always use classic pub/sub,
  /// whatever this says. URI option `sharded_pubsub=auto|on|off`.
  enum class ShardedPubsub { automatic, on, off };
  ShardedPubsub sharded_pubsub = ShardedPubsub::automatic;
  ///@}

  /// Lease of a lock taken without an explicit lease; the watchdog renews it
  /// every third of this while the lock is held. Default 30 s (as Redisson).
  std::chrono::milliseconds watchdog_timeout{30000};
  /// How far this machine's clock may run fast against the server's, as a
  /// fraction of a lease. A holder believes its lease valid until
  ///   (when the acquire or renewal was sent) + lease - (lease * factor + 2 ms)
  /// so it gives the lease up strictly before the server can expire it, even
  /// if the two clocks advance at rates that differ by up to `factor` (the
  /// margin the Redlock analysis prescribes). The guarantee assumes that
  /// drift bound and no pause of the holder's process longer than the
  /// margin between its check of the lease and its write; fencing tokens
  /// cover the rest. Default 0.01; must be in [0, 0.5).
  double clock_drift_factor = 0.01;
  ///@{
  /// The deployment. standalone: host and port (or unix_path).
  /// cluster / sentinel: `seeds`, as parsed from redis-cluster:// and
  /// redis-sentinel:// URIs (host and port are then the first seed). cluster:
  /// the seeds are asked for the slot map (docs/topologies.md); db must be 0.
  /// sentinel: the seeds are the sentinels; the Client asks them for the
  /// master `sentinel_master`, checks it with ROLE and follows failovers
  /// (docs/topologies.md).
  enum class Deployment { standalone, cluster, sentinel };
  Deployment deployment = Deployment::standalone;
  ///@}
  ///@{
  /// The kind of server the Client talks to (docs/backends.md). `redis`
  /// (the default) is everything above; `zookeeper` is an ensemble whose
  /// servers are `seeds` (set by a zookeeper:// URI), with `chroot`,
  /// `session_timeout`, and digest credentials from username/password.
  /// `mysql` (MySQL or MariaDB, GET_LOCK) and `postgresql` (advisory locks)
  /// are one server at host:port, with username/password, `database` and
  /// `tls`; each holding has a connection of its own (`max_connections`).
  /// A primitive a backend cannot provide fails at its factory with
  /// errc::not_supported.
  enum class Backend { redis, zookeeper, mysql, postgresql };
  Backend backend = Backend::redis;
  ///@}
  /// ZooKeeper: the path every lock path is relative to ("" or "/a/b"; the
  /// URI's path part). Must be absolute, without a trailing '/', empty
  /// segments, "." or "..".
  std::string chroot;
  /// ZooKeeper: the session timeout the Client asks the ensemble for (the
  /// ensemble bounds it to 2..20 ticks). A lock is held by the session: a
  /// holder whose process or link stops is replaced this long after the
  /// ensemble last heard from it. Default 10 s; must be in [1 ms, 1 h].
  std::chrono::milliseconds session_timeout{10000};
  /// MySQL/MariaDB and PostgreSQL: the database to connect to (the URI's
  /// path; empty: the server's default for the user).
  std::string database;
  /// MySQL/MariaDB and PostgreSQL: the most connections the Client opens.
  /// A lock is held by a connection: each holding, and each acquire while
  /// it waits, has one of its own; an acquire that finds all in use waits
  /// for one within its own wait (docs/backends.md). Default 16; must be
  /// in [1, 10000].
  std::size_t max_connections = 16;
  /// MySQL/MariaDB and PostgreSQL: how often the connection of a holding is
  /// asked a trivial query, so a link that went silent (no reset, no FIN)
  /// loses the holding within this plus command_timeout. A connection the
  /// server closes (KILL, pg_terminate_backend, a restart) is noticed at
  /// once without it. Default 5 s; must be in [1 ms, 1 h].
  std::chrono::milliseconds connection_check_interval{5000};
  /// One seed: a cluster node, a sentinel or a ZooKeeper server.
  struct Endpoint {
    std::string host;        ///< host name or IP address
    std::uint16_t port = 0;  ///< TCP port
  };
  /// The cluster nodes or sentinels to start from (see `deployment`).
  std::vector<Endpoint> seeds;
  ///@{
  /// Sentinel: the name of the master the sentinels monitor, and the
  /// sentinels' own credentials when they have any (the data nodes use
  /// username/password).
  std::string sentinel_master;
  std::string sentinel_username;
  std::string sentinel_password;
  ///@}

  /// Replica acknowledgement (best effort; docs/topologies.md). When > 0,
  /// every acquire is followed, on the same connection and in the same
  /// pipeline, by WAIT min_replicas_acked replica_ack_timeout. An acquire
  /// that fewer replicas acknowledge is undone (a compensating release) and
  /// fails with errc::replication_failed. A watchdog renewal that fewer
  /// replicas acknowledge does not extend the holder's belief in its lease
  /// (the lease is lost when that belief runs out). What remains: a failover
  /// within the acknowledgement window, or to a replica that did not ack,
  /// can still lose a write; the holder is told when its renewal finds the
  /// key gone. WAIT blocks the connection up to the timeout when replicas
  /// lag. Default 0 (no WAIT); must be >= 0.
  int min_replicas_acked = 0;
  /// With min_replicas_acked > 0: must be positive and below
  /// command_timeout. Default 1 s.
  std::chrono::milliseconds replica_ack_timeout{1000};
  /// Called on the Client's I/O thread the moment a lease is lost. Must not
  /// block. Optional.
  std::function<void(const LeaseLostEvent&)> on_lease_lost;
  ///@{
  /// Long-hold warning: on_long_hold is called once per holding
  /// (a lock kind's thread hold or Lease, a semaphore Permit) still held
  /// long_hold_warning after its first acquire was sent. It runs on the
  /// Client's I/O thread, from a timer (never inside a lock or unlock call),
  /// and must not block: every lease renewal waits behind it. Exceptions it
  /// throws are swallowed. 0 (the default) turns it off; must be >= 0.
  std::chrono::milliseconds long_hold_warning{0};
  std::function<void(const LongHoldEvent&)> on_long_hold;
  ///@}

  /// Parses a URI:
  ///   redis://[[user]:password@]host[:port][/db][?option=value&...]
  ///   rediss://...                  (TLS)
  ///   unix:///path/to/redis.sock[?db=N&...]
  ///   redis-cluster://[[user]:password@]h1[:p1],h2[:p2],...[?option=value&...]
  ///   redis-sentinel://[[user]:password@]h1[:p1],...,hN[:pN]/master-name[/db][?...]
  ///   rediss-cluster://..., rediss-sentinel://...   (TLS)
  ///   zookeeper://[user:password@]h1[:p1],...,hN[:pN][/chroot][?option=value&...]
  /// (seed ports default to 6379, sentinel ports to 26379; a host:port may
  /// appear once; a Cluster has only database 0)
  /// host may be a name, an IPv4 address or [an:IPv6::address]. user and
  /// password are percent-decoded. Options: db, connect_timeout_ms,
  /// command_timeout_ms, client_name, ca_file, ca_dir, cert_file, key_file,
  /// verify_peer (true/false), server_name, min_replicas_acked,
  /// replica_ack_timeout_ms, coalesce (true/false), preload_scripts
  /// (true/false), sharded_pubsub (auto/on/off); for sentinel URIs also sentinel_username and
  /// sentinel_password. zookeeper:// (Backend::zookeeper): server ports
  /// default to 2181; user:password is digest authentication; options
  /// session_timeout_ms, connect_timeout_ms, command_timeout_ms (the others
  /// are Redis options and are refused).
  ///
  ///   mysql://[user[:password]@]host[:port][/database][?option=value&...]
  ///   mariadb://...                 (the same: Backend::mysql)
  ///   postgresql://[user[:password]@]host[:port][/database][?option=value&...]
  ///   postgres://...                (the same: Backend::postgresql)
  /// One server only (a host list is refused); the port defaults to 3306 or
  /// 5432. user may come without a password, and may be empty (the server
  /// or client library then decides). user, password and database are
  /// percent-decoded; database is one path segment (write a '/' in it as
  /// %2F) and, like user and password, may not hold a NUL. Options:
  /// connect_timeout_ms, command_timeout_ms, max_connections (1..10000),
  /// connection_check_interval_ms (1..3600000), tls (true/false), ca_file,
  /// cert_file, key_file, verify_peer (true/false), server_name; on mysql://
  /// also ssl-mode (or ssl_mode: DISABLED, REQUIRED, VERIFY_CA,
  /// VERIFY_IDENTITY, any case), on postgresql:// also sslmode (disable,
  /// require, verify-ca, verify-full). TLS is off unless tls=true or an ssl
  /// mode other than DISABLED/disable turns it on; the other TLS options
  /// never turn it on by themselves: without TLS on they are refused, as
  /// they need rediss:// on Redis. REQUIRED/require sets verify_peer false;
  /// VERIFY_CA/verify-ca are treated as VERIFY_IDENTITY/verify-full
  /// (verify_peer true: certificate and host name). PREFERRED, prefer and
  /// allow, which fall back to plain text, are refused; so are an ssl mode
  /// together with tls or verify_peer, and ssl-mode with ssl_mode. Every
  /// Redis and ZooKeeper option is refused by name.
  ///
  /// Throws Error(errc::invalid_argument) naming the problem; the message never
  /// contains the password.
  static ClientOptions from_uri(std::string_view uri);
};

}  // namespace distlock
