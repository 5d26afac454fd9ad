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

std::optional<Client> connect(const CommonOptions& options, int& exit_code) {
  try {
    ClientOptions client_options = ClientOptions::from_uri(effective_uri(options.uri));
    client_options.client_name = "distlock-cli";
    // One process per command running two or three scripts: loading every
    // script at connect costs more than the first call's NOSCRIPT -> EVAL
    // (which happens only on a server that never ran that script).
    client_options.preload_scripts = false;
    std::optional<std::chrono::milliseconds> watchdog;
    if (!parse_duration_option("--watchdog", options.watchdog, watchdog)) {
      exit_code = kExitUsage;
      return std::nullopt;
    }
    if (watchdog) client_options.watchdog_timeout = *watchdog;
    return Client(std::move(client_options));
  } catch (const Error& e) {
    exit_code = exit_code_for(e.code());
    // A usage error is shown even with --quiet: the command line is wrong.
    say(options.quiet && exit_code != kExitUsage, std::string("cannot connect: ") + e.what());
    return std::nullopt;
  }
}

int exit_code_for(const std::error_code& ec) {
  if (ec == make_error_code(errc::invalid_argument)) return kExitUsage;
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
