// UriParser: reads the text of a redis://, rediss://, unix://, redis-cluster://,
// redis-sentinel://, zookeeper://, mysql:// (mariadb://) or postgresql://
// (postgres://) URI into the ClientOptions it describes
// (ClientOptions::from_uri). No I/O.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "distlock/client_options.hpp"

namespace distlock::net {

// One parse of one URI. parse() returns the options, or throws Error with
// errc::invalid_argument and a message starting "invalid Redis URI: " (or
// "invalid ZooKeeper URI: ", "invalid MySQL URI: " or "invalid PostgreSQL
// URI: " once the scheme is known) that never contains the password. The URI
// text must outlive the parser.
class UriParser {
 public:
  explicit UriParser(std::string_view uri) : uri_(uri) {}

  ClientOptions parse();

 private:
  enum class Scheme { redis, rediss, unix_socket, zookeeper, mysql, postgresql };

  bool sql() const { return scheme_ == Scheme::mysql || scheme_ == Scheme::postgresql; }
  std::string product() const;
  [[noreturn]] void fail(const std::string& problem) const;
  std::string quote(std::string_view fragment) const;
  std::string decode(std::string_view text, std::string_view what) const;

  std::string_view parse_scheme();
  void parse_userinfo(std::string_view userinfo);
  void parse_host_port(std::string_view host_port);
  void parse_seeds(std::string_view authority);
  void parse_sentinel_path(std::string_view path);
  void parse_chroot(std::string_view path);
  void check_digest_credentials() const;
  void check_host(std::string_view host) const;
  std::uint16_t parse_port(std::string_view text) const;
  void parse_db_path(std::string_view path);
  void parse_unix_path(std::string_view authority, std::string_view path);
  void parse_database_path(std::string_view path);
  void check_no_nul(const std::string& text, std::string_view what) const;
  void parse_query(std::string_view query);
  void apply_option(const std::string& name, const std::string& value);
  void apply_zookeeper_option(const std::string& name, const std::string& value);
  void apply_sql_option(const std::string& name, const std::string& value);
  void apply_ssl_mode(const std::string& name, const std::string& value);
  void claim(std::string& setter, const std::string& name, std::string_view what);
  bool parse_bool(const std::string& name, const std::string& value) const;
  void check_sql_tls() const;
  int parse_db(std::string_view text) const;
  std::chrono::milliseconds parse_timeout(std::string_view name,
                                          std::string_view text,
                                          std::int64_t max_ms) const;
  void require_tls(std::string_view name) const;

  std::string_view uri_;
  Scheme scheme_ = Scheme::redis;
  ClientOptions::Deployment deployment_ = ClientOptions::Deployment::standalone;
  ClientOptions options_;
  std::string_view raw_password_;
  // True when an '@' appears after the authority: a password holding a raw
  // '/' or '?' was then split in the wrong place, and any fragment quoted in
  // a message could be a piece of it.
  bool hide_fragments_ = false;
  bool db_in_path_ = false;
  std::vector<std::string> seen_options_;
  // SQL schemes: the option that turned TLS on or off (tls or the ssl mode),
  // the one that set verify_peer, and the first TLS setting, which needs TLS on.
  std::string tls_set_by_;
  std::string verify_set_by_;
  std::string first_tls_setting_;
};

}  // namespace distlock::net
