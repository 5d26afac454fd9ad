// What every distlock subcommand shares: the connection options, connecting,
// mapping library errors to exit codes, and messages on stderr.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <system_error>

#include "distlock/client.hpp"

namespace distlock::cli {

// Options every subcommand accepts.
struct CommonOptions {
  // Empty: DISTLOCK_URI, then REDIS_URL, then redis://127.0.0.1:6379.
  std::string uri;
  // The watchdog lease (ClientOptions::watchdog_timeout) as text; empty
  // keeps the library's default (30 s).
  std::string watchdog;
  // Suppresses distlock's own messages on stderr (never CMD's output).
  bool quiet = false;
};

// The URI to use: `given` when non-empty, else the environment's, else the
// local default.
std::string effective_uri(const std::string& given);

// The ClientOptions of the effective URI and the common options, before any
// I/O. On a URI or option that does not parse, or one the URI's backend
// lacks (--watchdog on zookeeper://, mysql:// or postgresql://), prints why
// and sets `exit_code` to
// kExitUsage. Never throws.
std::optional<ClientOptions> client_options(const CommonOptions& options, int& exit_code);
// Makes the Client of `client_options` (connecting). On failure prints why
// (unless quiet) and sets `exit_code`: kExitUsage for options the library
// refuses, kExitUnavailable when no server can be reached or one refuses
// the credentials. Never throws.
std::optional<Client> open_client(ClientOptions client_options, bool quiet, int& exit_code);
// client_options() then open_client().
std::optional<Client> connect(const CommonOptions& options, int& exit_code);

// True for a zookeeper:// URI (ClientOptions::Backend::zookeeper).
bool is_zookeeper(const ClientOptions& options);
// True for a mysql:// or postgresql:// URI: a lock held by a connection
// (GET_LOCK, advisory locks), nothing else.
bool is_sql(const ClientOptions& options);
// The backend's name in messages: "Redis", "ZooKeeper", "MySQL/MariaDB" or
// "PostgreSQL".
std::string backend_name(const ClientOptions& options);
// Says "<what>: not supported by the <backend_name> backend (<why>)" (even
// when quiet: it is a usage error) and returns kExitUsage.
int not_on_backend(const ClientOptions& options, const std::string& what, const std::string& why);

// The exit code for a failed library call: kExitUsage for invalid_argument
// and not_supported, kExitUnavailable for everything else (unreachable, timeout, refused by an
// ACL, WRONGTYPE, ...).
int exit_code_for(const std::error_code& ec);

// "distlock: <message>" on stderr, unless quiet.
void say(bool quiet, const std::string& message);

// Parses an optional duration option; on a bad value prints a usage error
// naming `option` and returns false.
bool parse_duration_option(const std::string& option,
                           const std::string& text,
                           std::optional<std::chrono::milliseconds>& out);

}  // namespace distlock::cli
