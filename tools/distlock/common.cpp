#include "common.hpp"

#include <cstdlib>
#include <iostream>

#include "distlock/error.hpp"
#include "duration.hpp"
#include "exit_codes.hpp"

namespace distlock::cli {

std::string effective_uri(const std::string& given) {
  if (!given.empty()) return given;
  for (const char* name : {"DISTLOCK_URI", "REDIS_URL"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  return "redis://127.0.0.1:6379";
}

std::optional<ClientOptions> client_options(const CommonOptions& options, int& exit_code) {
  std::optional<ClientOptions> out;
  try {
    out = ClientOptions::from_uri(effective_uri(options.uri));
  } catch (const Error& e) {
    exit_code = exit_code_for(e.code());
    // A usage error is shown even with --quiet: the command line is wrong.
    say(options.quiet && exit_code != kExitUsage, std::string("cannot connect: ") + e.what());
    return std::nullopt;
  }
  out->client_name = "distlock-cli";
  // One process per command running two or three scripts: loading every
  // script at connect costs more than the first call's NOSCRIPT -> EVAL
  // (which happens only on a server that never ran that script).
  out->preload_scripts = false;
  std::optional<std::chrono::milliseconds> watchdog;
  if (!parse_duration_option("--watchdog", options.watchdog, watchdog)) {
    exit_code = kExitUsage;
    return std::nullopt;
  }
  if (watchdog && is_zookeeper(*out)) {
    exit_code = not_on_backend(
        *out, "--watchdog", "a lock is held by the session; set ?session_timeout_ms= in the URI");
    return std::nullopt;
  }
  if (watchdog && is_sql(*out)) {
    exit_code = not_on_backend(*out, "--watchdog",
                               "a lock is held by its connection, nothing renews it; a silent "
                               "link is found by ?connection_check_interval_ms= in the URI");
    return std::nullopt;
  }
  if (watchdog) out->watchdog_timeout = *watchdog;
  return out;
}

std::optional<Client> open_client(ClientOptions client_options, bool quiet, int& exit_code) {
  try {
    return Client(std::move(client_options));
  } catch (const Error& e) {
    exit_code = exit_code_for(e.code());
    // The library's messages never contain the password.
    say(quiet && exit_code != kExitUsage, std::string("cannot connect: ") + e.what());
    return std::nullopt;
  }
}

std::optional<Client> connect(const CommonOptions& options, int& exit_code) {
  auto o = client_options(options, exit_code);
  if (!o) return std::nullopt;
  return open_client(std::move(*o), options.quiet, exit_code);
}

bool is_zookeeper(const ClientOptions& options) {
  return options.backend == ClientOptions::Backend::zookeeper;
}

bool is_sql(const ClientOptions& options) {
  return options.backend == ClientOptions::Backend::mysql ||
         options.backend == ClientOptions::Backend::postgresql;
}

std::string backend_name(const ClientOptions& options) {
  switch (options.backend) {
    case ClientOptions::Backend::zookeeper:
      return "ZooKeeper";
    case ClientOptions::Backend::mysql:
      return "MySQL/MariaDB";
    case ClientOptions::Backend::postgresql:
      return "PostgreSQL";
    case ClientOptions::Backend::redis:
      break;
  }
  return "Redis";
}

int not_on_backend(const ClientOptions& options, const std::string& what, const std::string& why) {
  say(false, what + ": not supported by the " + backend_name(options) + " backend (" + why + ")");
  return kExitUsage;
}

int exit_code_for(const std::error_code& ec) {
  // not_supported: the URI's backend lacks what the options ask for.
  if (ec == make_error_code(errc::invalid_argument) || ec == make_error_code(errc::not_supported)) {
    return kExitUsage;
  }
  return kExitUnavailable;
}

void say(bool quiet, const std::string& message) {
  if (!quiet) std::cerr << "distlock: " << message << '\n' << std::flush;
}

bool parse_duration_option(const std::string& option,
                           const std::string& text,
                           std::optional<std::chrono::milliseconds>& out) {
  out.reset();
  if (text.empty()) return true;
  out = parse_duration(text);
  if (out) return true;
  say(false, option + ": bad duration '" + text + "' (use e.g. 250ms, 10s, 5m, 1h, or 0)");
  return false;
}

}  // namespace distlock::cli
