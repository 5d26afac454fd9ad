// distlock status / list / force-unlock, on Redis (inspect.hpp), on
// ZooKeeper (zk_reader.hpp) and on MySQL/MariaDB and PostgreSQL
// (sql_inspect.hpp).
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "distlock/error.hpp"
#include "distlock/read_write_lock.hpp"
#include "distlock/simple_lock.hpp"
#include "exit_codes.hpp"
#include "inspect.hpp"
#include "sql_inspect.hpp"
#include "zk_reader.hpp"

namespace distlock::cli {
namespace {

int failed(const InspectOptions& o, const Error& e) {
  say(o.common.quiet, std::string("redis: ") + e.what());
  return exit_code_for(e.code());
}

// Deletes a lock of any lock kind through its own primitive, so waiters are
// woken (and a fair lock grants its next waiter).
bool force_unlock(Client& client, const Entry& e) {
  if (e.kind == "fair_lock") return client.fair_lock(e.name).force_unlock();
  if (e.kind == "read_write_lock")
    return client.read_write_lock(e.name).write_lock().force_unlock();
  if (e.kind == "simple_lock") return client.simple_lock(e.name).force_unlock();
  return client.lock(e.name).force_unlock();
}

// Connects a ZkReader; nullopt (after the message) with `code` set when
// that fails.
std::optional<ZkReader> zk_reader(const InspectOptions& o, const ClientOptions& co, int& code) {
  try {
    return std::optional<ZkReader>(std::in_place, co);
  } catch (const Error& e) {
    code = exit_code_for(e.code());
    // Its messages name the servers, never the password.
    say(o.common.quiet && code != kExitUsage, std::string("cannot connect: ") + e.what());
    return std::nullopt;
  }
}

int zk_failed(const InspectOptions& o, const Error& e) {
  const int code = exit_code_for(e.code());
  say(o.common.quiet && code != kExitUsage, e.what());
  return code;
}

int zookeeper_status(const InspectOptions& o, const ClientOptions& co) {
  int code = 0;
  auto reader = zk_reader(o, co, code);
  if (!reader) return code;
  try {
    const Entry e = reader->lock_entry(o.name);
    std::cout << (o.json ? to_json(e) + "\n" : to_text(e)) << std::flush;
    return 0;
  } catch (const Error& e) {
    return zk_failed(o, e);
  }
}

int zookeeper_list(const InspectOptions& o, const ClientOptions& co) {
  int code = 0;
  auto reader = zk_reader(o, co, code);
  if (!reader) return code;
  try {
    std::string out = o.json ? "[" : "";
    bool first = true;
    for (const Entry& e : reader->locks(o.pattern)) {
      out += o.json ? (first ? "" : ",") + to_json(e) : list_line(e);
      first = false;
    }
    std::cout << out << (o.json ? "]\n" : "") << std::flush;
    return 0;
  } catch (const Error& e) {
    return zk_failed(o, e);
  }
}

// A lock held by a session is freed by its own primitive, which tells the
// holder: on ZooKeeper the holder's node goes (the next waiter holds, the
// holder learns it was taken); on MySQL/MariaDB and PostgreSQL the holder's
// session is ended (KILL CONNECTION, pg_terminate_backend).
int session_force_unlock(const InspectOptions& o, ClientOptions co) {
  int code = 0;
  auto client = open_client(std::move(co), o.common.quiet, code);
  if (!client) return code;
  try {
    const bool unlocked = client->lock(o.name).force_unlock();
    if (o.json) {
      std::cout << "{\"name\":" << json_string(o.name)
                << ",\"kind\":" << json_string(unlocked ? "lock" : "none")
                << ",\"unlocked\":" << (unlocked ? "true" : "false") << "}\n";
    } else {
      std::cout << o.name << ": " << (unlocked ? "unlocked" : "was not locked") << "\n";
    }
    return 0;
  } catch (const Error& e) {
    return zk_failed(o, e);
  }
}

}  // namespace

int status_command(const InspectOptions& o) {
  int code = 0;
  auto co = client_options(o.common, code);
  if (!co) return code;
  if (is_zookeeper(*co)) return zookeeper_status(o, *co);
  if (is_sql(*co)) return sql_status(o, std::move(*co));
  auto client = open_client(std::move(*co), o.common.quiet, code);
  if (!client) return code;
  try {
    const Entry e = inspect_name(*client, o.name);
    std::cout << (o.json ? to_json(e) + "\n" : to_text(e)) << std::flush;
    return 0;
  } catch (const Error& e) {
    return failed(o, e);
  }
}

int list_command(const InspectOptions& o) {
  int code = 0;
  auto co = client_options(o.common, code);
  if (!co) return code;
  if (is_zookeeper(*co)) return zookeeper_list(o, *co);
  if (is_sql(*co)) return sql_no_listing(*co, "list");
  auto client = open_client(std::move(*co), o.common.quiet, code);
  if (!client) return code;
  try {
    std::string out = o.json ? "[" : "";
    bool first = true;
    KeyScanner scanner(*client);
    for (const std::string& key : scanner.keys(o.pattern)) {
      const auto e = inspect_key(*client, key);
      if (!e) continue;
      if (o.json) {
        out += (first ? "" : ",") + to_json(*e);
      } else {
        out += list_line(*e);
      }
      first = false;
    }
    std::cout << out << (o.json ? "]\n" : "") << std::flush;
    return 0;
  } catch (const Error& e) {
    return failed(o, e);
  }
}

int force_unlock_command(const InspectOptions& o) {
  if (!o.yes) {
    say(false, "force-unlock deletes '" + o.name +
                   "' whoever holds it; its holder keeps running. Add --yes to confirm.");
    return kExitUsage;
  }
  int code = 0;
  auto co = client_options(o.common, code);
  if (!co) return code;
  if (is_zookeeper(*co) || is_sql(*co)) return session_force_unlock(o, std::move(*co));
  auto client = open_client(std::move(*co), o.common.quiet, code);
  if (!client) return code;
  try {
    const Entry e = inspect_name(*client, o.name);
    if (e.kind != "none" && !e.kind.ends_with("lock")) {
      say(false, "'" + o.name + "' is a " + e.kind + ", not a lock: not deleted");
      return kExitUsage;
    }
    const bool unlocked = e.kind != "none" && force_unlock(*client, e);
    if (o.json) {
      std::cout << "{\"name\":" << json_string(o.name) << ",\"kind\":" << json_string(e.kind)
                << ",\"unlocked\":" << (unlocked ? "true" : "false") << "}\n";
    } else {
      std::cout << o.name << ": " << (unlocked ? "unlocked" : "was not locked") << "\n";
    }
    return 0;
  } catch (const Error& e) {
    return failed(o, e);
  }
}

}  // namespace distlock::cli
