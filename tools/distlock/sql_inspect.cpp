#include "sql_inspect.hpp"

#include <iostream>
#include <optional>

#include "backend/sql_dialect.hpp"
#include "distlock/error.hpp"
#include "distlock/lock.hpp"
#include "exit_codes.hpp"
#include "inspect.hpp"

namespace distlock::cli {
namespace {

bool is_mysql(const ClientOptions& co) {
  return co.backend == ClientOptions::Backend::mysql;
}

// The server's own lock for `name`, as a JSON value: GET_LOCK's name (a
// string) or the advisory lock's key (a number). The library's dialect
// derives both, so status names what the server holds.
std::string server_lock_json(const ClientOptions& co, const std::string& name) {
  if (is_mysql(co)) return json_string(backend::sql::mysql_lock_name(name));
  return std::to_string(backend::sql::postgresql_key(name));
}

std::string server_lock_text(const ClientOptions& co, const std::string& name) {
  if (is_mysql(co)) return "GET_LOCK name '" + backend::sql::mysql_lock_name(name) + "'";
  return "advisory lock key " + std::to_string(backend::sql::postgresql_key(name));
}

std::string backend_json(const ClientOptions& co) {
  return is_mysql(co) ? "\"mysql\"" : "\"postgresql\"";
}

int failed(const InspectOptions& o, const Error& e) {
  const int code = exit_code_for(e.code());
  // The library's messages never contain the password.
  say(o.common.quiet && code != kExitUsage, e.what());
  return code;
}

}  // namespace

int sql_status(const InspectOptions& o, ClientOptions co) {
  int code = 0;
  const ClientOptions shown = co;
  auto client = open_client(std::move(co), o.common.quiet, code);
  if (!client) return code;
  try {
    const bool held = client->lock(o.name).is_locked();
    if (o.json) {
      std::cout << "{\"name\":" << json_string(o.name) << ",\"kind\":\"" << (held ? "lock" : "none")
                << "\",\"locked\":" << (held ? "true" : "false")
                << ",\"backend\":" << backend_json(shown)
                << ",\"server_lock\":" << server_lock_json(shown, o.name) << "}\n";
    } else {
      std::cout << o.name << ": " << (held ? "held" : "not held") << "\n"
                << "  backend:  " << backend_name(shown) << ", " << server_lock_text(shown, o.name)
                << "\n";
      if (held) std::cout << "  holder:   a session of the server (it does not say which)\n";
    }
    std::cout << std::flush;
    return 0;
  } catch (const Error& e) {
    return failed(o, e);
  }
}

int sql_no_listing(const ClientOptions& co, const std::string& what) {
  return not_on_backend(co, what,
                        is_mysql(co)
                            ? "the server cannot list GET_LOCK locks by name; use distlock "
                              "status NAME"
                            : "an advisory lock has only a 64-bit key on the server, no name; "
                              "use distlock status NAME");
}

}  // namespace distlock::cli
