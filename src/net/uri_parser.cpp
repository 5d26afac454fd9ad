#include "net/uri_parser.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "distlock/error.hpp"
#include "net/uri_text.hpp"
#include "net/zk_path.hpp"

namespace distlock::net {

using namespace uri_text;

namespace {

constexpr std::size_t npos = std::string_view::npos;
// Timeouts are added to steady_clock::now() in nanoseconds; this bound (about
// 24.8 days) keeps that sum far from overflowing.
constexpr std::int64_t kMaxTimeoutMs = std::numeric_limits<std::int32_t>::max();
// ClientOptions::session_timeout: at most 1 h.
constexpr std::int64_t kMaxSessionTimeoutMs = 3'600'000;
constexpr std::uint16_t kZooKeeperPort = 2181;
constexpr std::uint16_t kMySqlPort = 3306;
constexpr std::uint16_t kPostgreSqlPort = 5432;
// ClientOptions::max_connections and connection_check_interval: their ranges.
constexpr std::uint32_t kMaxConnections = 10'000;
constexpr std::int64_t kMaxCheckIntervalMs = 3'600'000;
// sockaddr_un::sun_path holds the path and its terminating NUL.
constexpr std::size_t kMaxUnixPath = sizeof(sockaddr_un{}.sun_path) - 1;

}  // namespace

ClientOptions UriParser::parse() {
  if (uri_.empty()) fail("empty string");
  const std::string_view rest = parse_scheme();
  // RFC 3986: the authority ends at the first '/' or '?'; its userinfo ends at
  // its last '@'. Reserved characters in user and password must be
  // percent-encoded.
  const std::size_t authority_end = std::min(rest.find_first_of("/?"), rest.size());
  std::string_view authority = rest.substr(0, authority_end);
  const std::string_view tail = rest.substr(authority_end);
  hide_fragments_ = tail.find('@') != npos;
  if (const std::size_t at = authority.rfind('@'); at != npos) {
    parse_userinfo(authority.substr(0, at));
    authority.remove_prefix(at + 1);
  }
  const std::size_t query_start = std::min(tail.find('?'), tail.size());
  const std::string_view path = tail.substr(0, query_start);
  if (scheme_ == Scheme::unix_socket) {
    parse_unix_path(authority, path);
  } else if (scheme_ == Scheme::zookeeper) {
    parse_seeds(authority);
    parse_chroot(path);
  } else if (sql()) {
    if (authority.find(',') != npos) {
      fail("a " + product() + " URI names one server (got a comma-separated host list)");
    }
    options_.port = scheme_ == Scheme::mysql ? kMySqlPort : kPostgreSqlPort;
    parse_host_port(authority);
    parse_database_path(path);
  } else if (deployment_ != ClientOptions::Deployment::standalone) {
    parse_seeds(authority);
    if (deployment_ == ClientOptions::Deployment::sentinel) {
      parse_sentinel_path(path);
    } else if (!path.empty() && path != "/") {
      fail("unexpected path " + quote(path) + " (a Redis Cluster has only database 0)");
    }
  } else {
    parse_host_port(authority);
    parse_db_path(path);
  }
  if (query_start < tail.size()) parse_query(tail.substr(query_start + 1));
  if (!options_.tls.key_file.empty() && options_.tls.cert_file.empty()) {
    fail("option key_file requires cert_file");
  }
  options_.deployment = deployment_;
  if (sql()) {
    check_sql_tls();
    options_.backend = scheme_ == Scheme::mysql ? ClientOptions::Backend::mysql
                                                : ClientOptions::Backend::postgresql;
  } else {
    options_.tls.enabled = scheme_ == Scheme::rediss;
    options_.backend = scheme_ == Scheme::zookeeper ? ClientOptions::Backend::zookeeper
                                                    : ClientOptions::Backend::redis;
  }
  return std::move(options_);
}

std::string UriParser::product() const {
  switch (scheme_) {
    case Scheme::zookeeper:
      return "ZooKeeper";
    case Scheme::mysql:
      return "MySQL";
    case Scheme::postgresql:
      return "PostgreSQL";
    default:
      return "Redis";
  }
}

// Every message starts with "invalid Redis URI: ", or "invalid ZooKeeper URI: ",
// "invalid MySQL URI: " or "invalid PostgreSQL URI: " once the scheme is
// known. The password (as written and decoded) is replaced by "***" wherever
// it would appear, even inside a fragment that only happens to equal it.
void UriParser::fail(const std::string& problem) const {
  std::string message = "invalid " + product() + " URI: " + problem;
  replace_all(message, raw_password_);
  replace_all(message, options_.password);
  replace_all(message, options_.sentinel_password);
  throw Error(errc::invalid_argument, message);
}

std::string UriParser::quote(std::string_view fragment) const {
  return hide_fragments_ ? "'***'" : "'" + escaped(fragment) + "'";
}

std::string UriParser::decode(std::string_view text, std::string_view what) const {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    const int high = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
    const int low = high >= 0 ? hex_value(text[i + 2]) : -1;
    if (low < 0) fail("invalid percent-encoding in " + std::string(what));
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

// Returns what follows "<scheme>://".
std::string_view UriParser::parse_scheme() {
  const std::size_t colon = uri_.find(':');
  std::string scheme(uri_.substr(0, colon == npos ? 0 : colon));
  const bool plausible = !scheme.empty() && std::all_of(scheme.begin(), scheme.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
  });
  if (!plausible) {
    fail(
        "missing scheme (expected redis://, rediss://, unix://, zookeeper://, mysql:// or "
        "postgresql://)");
  }
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string shown = scheme;
  for (const auto& [suffix, deployment] :
       {std::pair{std::string_view("-cluster"), ClientOptions::Deployment::cluster},
        std::pair{std::string_view("-sentinel"), ClientOptions::Deployment::sentinel}}) {
    if (scheme.ends_with(suffix)) {
      deployment_ = deployment;
      scheme.resize(scheme.size() - suffix.size());
      if (scheme != "redis" && scheme != "rediss") scheme = shown;  // unknown below
    }
  }
  if (scheme == "redis") {
    scheme_ = Scheme::redis;
  } else if (scheme == "rediss") {
    scheme_ = Scheme::rediss;
  } else if (scheme == "unix") {
    scheme_ = Scheme::unix_socket;
  } else if (scheme == "zookeeper") {  // "zookeeper-cluster" stays unknown above
    scheme_ = Scheme::zookeeper;
  } else if (scheme == "mysql" || scheme == "mariadb") {
    scheme_ = Scheme::mysql;
  } else if (scheme == "postgresql" || scheme == "postgres") {
    scheme_ = Scheme::postgresql;
  } else {
    fail("unknown scheme " + quote(shown) +
         " (expected redis, rediss, unix, redis-cluster, rediss-cluster, redis-sentinel, "
         "rediss-sentinel, zookeeper, mysql, mariadb, postgresql or postgres)");
  }
  const std::string_view after = uri_.substr(colon + 1);
  if (after.substr(0, 2) != "//") fail("missing '//' after '" + shown + ":'");
  return after.substr(2);
}

void UriParser::parse_userinfo(std::string_view userinfo) {
  const std::size_t colon = userinfo.find(':');
  if (colon == npos && scheme_ == Scheme::zookeeper) {
    fail("digest authentication needs user:password (the password is missing)");
  }
  if (colon == npos && !sql()) fail("user name without a password (expected [user]:password@)");
  // MySQL and PostgreSQL take a user without a password (trust, peer or
  // .pgpass authentication); then there is no password to hide.
  raw_password_ = colon == npos ? std::string_view() : userinfo.substr(colon + 1);
  options_.username = decode(userinfo.substr(0, colon), "the user name");
  options_.password = decode(raw_password_, "the password");
  if (scheme_ == Scheme::zookeeper) check_digest_credentials();
  if (sql()) {
    check_no_nul(options_.username, "the user name");
    check_no_nul(options_.password, "the password");
  }
}

// The MySQL and PostgreSQL client libraries take C strings: a NUL would cut
// the value short and log in as someone else, or to another database.
void UriParser::check_no_nul(const std::string& text, std::string_view what) const {
  if (text.find('\0') != std::string::npos) {
    fail(std::string(what) + " contains a NUL byte (%00), which the " + product() +
         " client library cannot send");
  }
}

// ZooKeeper's digest scheme authenticates "user:password" and splits it at
// the first ':': both parts are needed, and the user name cannot hold a ':'.
void UriParser::check_digest_credentials() const {
  const bool no_user = options_.username.empty();
  const bool no_password = options_.password.empty();
  if (no_user || no_password) {
    fail(std::string("digest authentication needs user:password (") +
         (no_user && no_password ? "both are empty"
          : no_user              ? "the user name is empty"
                                 : "the password is empty") +
         ")");
  }
  if (options_.username.find(':') != std::string::npos) {
    fail("the digest user name contains ':' (ZooKeeper splits user:password at the first ':')");
  }
}

void UriParser::parse_host_port(std::string_view host_port) {
  std::string_view host = host_port;
  std::string_view port;
  bool has_port = false;
  if (host_port.starts_with('[')) {
    const std::size_t close = host_port.find(']');
    if (close == npos) fail("unterminated IPv6 address (missing ']')");
    host = host_port.substr(1, close - 1);
    const std::string_view after = host_port.substr(close + 1);
    if (!after.empty() && after[0] != ':') fail("unexpected " + quote(after) + " after ']'");
    has_port = !after.empty();
    port = after.substr(has_port ? 1 : 0);
    in6_addr address{};
    if (host.empty()) fail("empty IPv6 address '[]'");
    if (inet_pton(AF_INET6, std::string(host).c_str(), &address) != 1) {
      fail("invalid IPv6 address " + quote(host));
    }
  } else {
    const std::size_t colon = host_port.find(':');
    if (colon != npos && host_port.find(':', colon + 1) != npos) {
      const char* example = scheme_ == Scheme::zookeeper    ? "zookeeper://[::1]:2181"
                            : scheme_ == Scheme::mysql      ? "mysql://[::1]:3306"
                            : scheme_ == Scheme::postgresql ? "postgresql://[::1]:5432"
                                                            : "redis://[::1]:6379";
      fail(std::string("an IPv6 address must be enclosed in brackets, as in ") + example);
    }
    has_port = colon != npos;
    host = host_port.substr(0, colon);
    port = has_port ? host_port.substr(colon + 1) : std::string_view();
    check_host(host);
  }
  options_.host = std::string(host);
  if (has_port) options_.port = parse_port(port);
}

// h1[:p1],h2[:p2],...: every seed of a Cluster, the sentinels, or the servers
// of a ZooKeeper ensemble.
void UriParser::parse_seeds(std::string_view authority) {
  const bool sentinel = deployment_ == ClientOptions::Deployment::sentinel;
  if (authority.empty()) fail(sentinel ? "empty sentinel list" : "empty host list");
  while (true) {
    const std::size_t comma = std::min(authority.find(','), authority.size());
    const std::string_view entry = authority.substr(0, comma);
    if (entry.empty()) fail("empty entry in the host list " + quote(authority));
    options_.port = scheme_ == Scheme::zookeeper ? kZooKeeperPort : sentinel ? 26379 : 6379;
    parse_host_port(entry);
    for (const auto& seed : options_.seeds) {
      if (seed.host == options_.host && seed.port == options_.port) {
        fail("host " + quote(options_.host + ":" + std::to_string(options_.port)) + " given twice");
      }
    }
    options_.seeds.push_back({options_.host, options_.port});
    if (comma == authority.size()) break;
    authority.remove_prefix(comma + 1);
  }
  options_.host = options_.seeds.front().host;
  options_.port = options_.seeds.front().port;
}

// /master-name[/db]
void UriParser::parse_sentinel_path(std::string_view path) {
  if (path.size() <= 1) {
    fail("missing master name (expected redis-sentinel://host:port/master-name)");
  }
  path.remove_prefix(1);
  const std::size_t slash = std::min(path.find('/'), path.size());
  options_.sentinel_master = decode(path.substr(0, slash), "the master name");
  if (options_.sentinel_master.empty()) fail("empty master name");
  if (std::any_of(options_.sentinel_master.begin(), options_.sentinel_master.end(),
                  [](char c) { return is_control(c) || c == ' '; })) {
    fail("master name contains a space or control character");
  }
  if (slash < path.size()) parse_db_path(path.substr(slash));
}

// [/chroot]: "" and "/" are no chroot; anything else is percent-decoded and
// must be a path zk_path_problem accepts.
void UriParser::parse_chroot(std::string_view path) {
  if (path.empty() || path == "/") return;
  std::string chroot = decode(path, "the chroot");
  if (const auto problem = zk_path_problem(chroot)) {
    fail("chroot " + quote(chroot) + " " + *problem);
  }
  options_.chroot = std::move(chroot);
}

// Host names and IPv4 addresses: letters, digits, '-', '.' and '_' (which
// Docker and Kubernetes service names use).
void UriParser::check_host(std::string_view host) const {
  if (host.empty()) fail("missing host");
  for (const char c : host) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') {
      fail("invalid character " + quote(std::string_view(&c, 1)) + " in host");
    }
  }
}

std::uint16_t UriParser::parse_port(std::string_view text) const {
  if (text.empty()) fail("missing port number after ':'");
  if (!is_digits(text)) fail("port " + quote(text) + " is not a number");
  std::uint32_t port = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc() || port == 0 || port > 65535) {
    fail("port " + (hide_fragments_ ? std::string("***") : std::string(text)) +
         " out of range 1..65535");
  }
  return static_cast<std::uint16_t>(port);
}

void UriParser::parse_db_path(std::string_view path) {
  if (path.empty() || path == "/") return;
  const std::string_view db = path.substr(1);
  if (db.find('/') != npos) {
    fail("unexpected path " + quote(path) + " (only /<db> may follow the host)");
  }
  options_.db = parse_db(db);
  db_in_path_ = true;
}

int UriParser::parse_db(std::string_view text) const {
  if (!is_digits(text)) {
    fail("database number " + quote(text) + " is not a non-negative integer");
  }
  int db = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), db);
  if (ec != std::errc()) fail("database number " + quote(text) + " out of range");
  return db;
}

void UriParser::parse_unix_path(std::string_view authority, std::string_view path) {
  if (!authority.empty()) {
    fail("unix socket path must be absolute, as in unix:///run/redis.sock");
  }
  if (path.empty() || path == "/") fail("empty unix socket path");
  options_.unix_path = decode(path, "the unix socket path");
  if (std::any_of(options_.unix_path.begin(), options_.unix_path.end(), is_control)) {
    fail("unix socket path contains a control character");
  }
  if (options_.unix_path.size() > kMaxUnixPath) {
    fail("unix socket path is " + std::to_string(options_.unix_path.size()) +
         " bytes long (at most " + std::to_string(kMaxUnixPath) + ")");
  }
}

// [/database]: "" and "/" leave it to the server (the user's default); one
// path segment, percent-decoded, so a '/' in the name is written %2F.
void UriParser::parse_database_path(std::string_view path) {
  if (path.empty() || path == "/") return;
  const std::string_view raw = path.substr(1);
  if (raw.find('/') != npos) {
    fail("unexpected path " + quote(path) +
         " (the database name is one path segment; write a '/' in it as %2F)");
  }
  std::string database = decode(raw, "the database name");
  check_no_nul(database, "the database name");
  if (std::any_of(database.begin(), database.end(), is_control)) {
    fail("database name " + quote(database) + " contains a control character");
  }
  options_.database = std::move(database);
}

void UriParser::parse_query(std::string_view query) {
  while (!query.empty()) {
    const std::size_t amp = std::min(query.find('&'), query.size());
    const std::string_view item = query.substr(0, amp);
    query.remove_prefix(std::min(amp + 1, query.size()));
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == npos) fail("option " + quote(item) + " has no value (expected name=value)");
    const std::string name = decode(item.substr(0, eq), "an option name");
    const std::string value = decode(item.substr(eq + 1), "the value of option " + quote(name));
    if (std::find(seen_options_.begin(), seen_options_.end(), name) != seen_options_.end()) {
      fail("option " + quote(name) + " given twice");
    }
    seen_options_.push_back(name);
    if (std::any_of(value.begin(), value.end(), is_control)) {
      fail("value of option " + quote(name) + " contains a control character");
    }
    apply_option(name, value);
  }
}

void UriParser::apply_option(const std::string& name, const std::string& value) {
  if (scheme_ == Scheme::zookeeper) {
    apply_zookeeper_option(name, value);
    return;
  }
  if (sql()) {
    apply_sql_option(name, value);
    return;
  }
  if (name == "session_timeout_ms") fail("option " + quote(name) + " requires a zookeeper:// URI");
  if (name == "max_connections" || name == "connection_check_interval_ms") {
    fail("option " + quote(name) + " requires a mysql:// or postgresql:// URI");
  }
  struct TlsString {
    std::string_view name;
    std::string TlsOptions::*member;
  };
  static constexpr TlsString kTlsStrings[] = {{"ca_file", &TlsOptions::ca_file},
                                              {"ca_dir", &TlsOptions::ca_dir},
                                              {"cert_file", &TlsOptions::cert_file},
                                              {"key_file", &TlsOptions::key_file},
                                              {"server_name", &TlsOptions::server_name}};
  const auto* tls = std::find_if(std::begin(kTlsStrings), std::end(kTlsStrings),
                                 [&](const TlsString& t) { return t.name == name; });
  if (tls == std::end(kTlsStrings) && name != "db" && name != "connect_timeout_ms" &&
      name != "command_timeout_ms" && name != "client_name" && name != "verify_peer" &&
      name != "min_replicas_acked" && name != "replica_ack_timeout_ms" &&
      name != "sentinel_username" && name != "sentinel_password" && name != "coalesce" &&
      name != "preload_scripts" && name != "sharded_pubsub") {
    fail("unknown option " + quote(name));
  }
  if (value.empty() && name != "client_name") fail("option " + quote(name) + " has no value");
  if (name == "sentinel_username" || name == "sentinel_password") {
    if (deployment_ != ClientOptions::Deployment::sentinel) {
      fail("option " + quote(name) + " requires a redis-sentinel:// URI");
    }
    (name == "sentinel_username" ? options_.sentinel_username : options_.sentinel_password) = value;
  } else if (name == "db") {
    if (deployment_ == ClientOptions::Deployment::cluster) {
      fail("option 'db' in a Cluster URI (a Redis Cluster has only database 0)");
    }
    if (db_in_path_) fail("database number given twice (in the path and as option db)");
    options_.db = parse_db(value);
  } else if (name == "connect_timeout_ms") {
    options_.connect_timeout = parse_timeout(name, value, kMaxTimeoutMs);
  } else if (name == "command_timeout_ms") {
    options_.command_timeout = parse_timeout(name, value, kMaxTimeoutMs);
  } else if (name == "replica_ack_timeout_ms") {
    options_.replica_ack_timeout = parse_timeout(name, value, kMaxTimeoutMs);
  } else if (name == "min_replicas_acked") {
    int n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (!is_digits(value) || ec != std::errc() || n > 1000) {
      fail("min_replicas_acked " + quote(value) + " is not a number of replicas 0..1000");
    }
    options_.min_replicas_acked = n;
  } else if (name == "client_name") {
    // Redis refuses CLIENT SETNAME with spaces or characters outside '!'..'~'.
    if (std::any_of(value.begin(), value.end(), [](char c) { return c < '!' || c > '~'; })) {
      fail("client_name " + quote(value) + " contains a space or special character");
    }
    options_.client_name = value;
  } else if (name == "coalesce" || name == "preload_scripts") {
    (name == "coalesce" ? options_.coalesce : options_.preload_scripts) = parse_bool(name, value);
  } else if (name == "sharded_pubsub") {
    if (value == "auto") {
      options_.sharded_pubsub = ClientOptions::ShardedPubsub::automatic;
    } else if (value == "on") {
      options_.sharded_pubsub = ClientOptions::ShardedPubsub::on;
    } else if (value == "off") {
      options_.sharded_pubsub = ClientOptions::ShardedPubsub::off;
    } else {
      fail("sharded_pubsub " + quote(value) + " must be auto, on or off");
    }
  } else if (name == "verify_peer") {
    require_tls(name);
    options_.tls.verify_peer = parse_bool(name, value);
  } else {
    require_tls(name);
    options_.tls.*(tls->member) = value;
  }
}

// The options of a zookeeper:// URI; every Redis option is refused by name.
void UriParser::apply_zookeeper_option(const std::string& name, const std::string& value) {
  if (name != "session_timeout_ms" && name != "connect_timeout_ms" &&
      name != "command_timeout_ms") {
    fail("option " + quote(name) +
         " is not a ZooKeeper option (expected session_timeout_ms, connect_timeout_ms or "
         "command_timeout_ms)");
  }
  if (value.empty()) fail("option " + quote(name) + " has no value");
  if (name == "session_timeout_ms") {
    options_.session_timeout = parse_timeout(name, value, kMaxSessionTimeoutMs);
  } else if (name == "connect_timeout_ms") {
    options_.connect_timeout = parse_timeout(name, value, kMaxTimeoutMs);
  } else {
    options_.command_timeout = parse_timeout(name, value, kMaxTimeoutMs);
  }
}

// The options of a mysql:// or postgresql:// URI; every Redis and ZooKeeper
// option is refused by name. TLS settings (ca_file, cert_file, key_file,
// server_name, verify_peer) need TLS turned on in the same URI, by tls=true
// or the ssl mode (check_sql_tls), as they need rediss:// on Redis: a setting
// never changes the transport by itself.
void UriParser::apply_sql_option(const std::string& name, const std::string& value) {
  const bool mysql = scheme_ == Scheme::mysql;
  const bool ssl_mode = mysql ? name == "ssl-mode" || name == "ssl_mode" : name == "sslmode";
  static constexpr std::string_view kNames[] = {"connect_timeout_ms",
                                                "command_timeout_ms",
                                                "max_connections",
                                                "connection_check_interval_ms",
                                                "tls",
                                                "ca_file",
                                                "cert_file",
                                                "key_file",
                                                "verify_peer",
                                                "server_name"};
  if (!ssl_mode && std::find(std::begin(kNames), std::end(kNames), name) == std::end(kNames)) {
    fail("option " + quote(name) + " is not a " + product() +
         " option (expected connect_timeout_ms, command_timeout_ms, max_connections, "
         "connection_check_interval_ms, tls, ca_file, cert_file, key_file, verify_peer, "
         "server_name or " +
         (mysql ? "ssl-mode" : "sslmode") + ")");
  }
  if (value.empty()) fail("option " + quote(name) + " has no value");
  if (ssl_mode) {
    apply_ssl_mode(name, value);
  } else if (name == "connect_timeout_ms") {
    options_.connect_timeout = parse_timeout(name, value, kMaxTimeoutMs);
  } else if (name == "command_timeout_ms") {
    options_.command_timeout = parse_timeout(name, value, kMaxTimeoutMs);
  } else if (name == "connection_check_interval_ms") {
    options_.connection_check_interval = parse_timeout(name, value, kMaxCheckIntervalMs);
  } else if (name == "max_connections") {
    std::uint32_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (!is_digits(value) || ec != std::errc() || n < 1 || n > kMaxConnections) {
      fail("max_connections " + quote(value) + " is not a number of connections 1..10000");
    }
    options_.max_connections = n;
  } else if (name == "tls") {
    claim(tls_set_by_, name, "TLS on or off");
    options_.tls.enabled = parse_bool(name, value);
  } else {
    if (first_tls_setting_.empty()) first_tls_setting_ = name;
    if (name == "verify_peer") {
      claim(verify_set_by_, name, "verify_peer");
      options_.tls.verify_peer = parse_bool(name, value);
    } else {
      std::string TlsOptions::*member = name == "ca_file"     ? &TlsOptions::ca_file
                                        : name == "cert_file" ? &TlsOptions::cert_file
                                        : name == "key_file"  ? &TlsOptions::key_file
                                                              : &TlsOptions::server_name;
      options_.tls.*member = value;
    }
  }
}

// PostgreSQL's sslmode and MySQL's ssl-mode (or ssl_mode), as libpq and the
// mysql client take them. verify-ca / VERIFY_CA are treated as verify-full /
// VERIFY_IDENTITY: verify_peer checks the certificate and the host name
// together. The modes that fall back to plain text (allow, prefer,
// PREFERRED) are refused: a lock server reached unencrypted by surprise is
// what the URI meant to rule out.
void UriParser::apply_ssl_mode(const std::string& name, const std::string& value) {
  claim(tls_set_by_, name, "TLS on or off");
  claim(verify_set_by_, name, "verify_peer");
  const bool mysql = scheme_ == Scheme::mysql;
  std::string mode = value;
  if (mysql) {  // the mysql client reads --ssl-mode case-insensitively
    std::transform(mode.begin(), mode.end(), mode.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  }
  const std::string_view off = mysql ? "DISABLED" : "disable";
  const std::string_view encrypt = mysql ? "REQUIRED" : "require";
  const std::string_view verify_ca = mysql ? "VERIFY_CA" : "verify-ca";
  const std::string_view verify_full = mysql ? "VERIFY_IDENTITY" : "verify-full";
  const std::string expected = "(expected " + std::string(off) + ", " + std::string(encrypt) +
                               ", " + std::string(verify_ca) + " or " + std::string(verify_full);
  if (mode == off) {
    options_.tls.enabled = false;
  } else if (mode == encrypt || mode == verify_ca || mode == verify_full) {
    options_.tls.enabled = true;
    options_.tls.verify_peer = mode != encrypt;
  } else if (mode == (mysql ? "PREFERRED" : "prefer") || (!mysql && mode == "allow")) {
    fail(name + " " + quote(value) + " is not supported " + expected +
         "; distlock never falls back to an unencrypted connection)");
  } else {
    fail(name + " " + quote(value) + " is not an ssl mode " + expected + ")");
  }
}

// Two options that set the same thing (tls and sslmode; ssl-mode and
// ssl_mode; verify_peer and an ssl mode) would leave it to their order.
void UriParser::claim(std::string& setter, const std::string& name, std::string_view what) {
  if (!setter.empty()) {
    fail("options " + quote(setter) + " and " + quote(name) + " both set " + std::string(what) +
         " (give one)");
  }
  setter = name;
}

void UriParser::check_sql_tls() const {
  if (first_tls_setting_.empty() || options_.tls.enabled) return;
  fail("option " + quote(first_tls_setting_) + " requires TLS, which this URI leaves off (add " +
       (scheme_ == Scheme::mysql ? "tls=true or ssl-mode=REQUIRED, VERIFY_CA or VERIFY_IDENTITY"
                                 : "tls=true or sslmode=require, verify-ca or verify-full") +
       ")");
}

bool UriParser::parse_bool(const std::string& name, const std::string& value) const {
  if (value != "true" && value != "false")
    fail(name + " " + quote(value) + " must be true or false");
  return value == "true";
}

std::chrono::milliseconds UriParser::parse_timeout(std::string_view name,
                                                   std::string_view text,
                                                   std::int64_t max_ms) const {
  std::int64_t ms = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (!is_digits(text) || (ec == std::errc() && ms == 0)) {
    fail(std::string(name) + " " + quote(text) + " is not a positive number of milliseconds");
  }
  if (ec != std::errc() || ms > max_ms) {
    fail(std::string(name) + " " + quote(text) + " out of range 1.." + std::to_string(max_ms));
  }
  return std::chrono::milliseconds(ms);
}

void UriParser::require_tls(std::string_view name) const {
  if (scheme_ != Scheme::rediss) {
    fail("option " + quote(name) + " requires the rediss:// scheme (TLS)");
  }
}

}  // namespace distlock::net
