// The bad-input table's checks (docs/reliability.md, "## Bad input"): the
// environment every row runs in and the ways a row's bad call is made. Each
// primitive registers its rows' checks from its own file:
//
//   std::map<std::string, Check> fair_lock_checks() { return {{"fair_lock.empty", ...}}; }
//   const bool registered = register_checks(&fair_lock_checks);
//
// ReliabilityDoc.EveryBadInputRowReturnsItsDocumentedErrorAgainstARealServer
// runs every registered check whose id has a row, and fails for a row
// without a check or a check without a row.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/refusing_port.hpp"

namespace distlock::bad_input {

using namespace std::chrono_literals;
using test::RedisServer;

// --- The bad-input checks -----------------------------------------------------

// What a call reported: the error code it threw, or returned when it returns
// one, or none.
template <class F>
std::error_code code_of(F f) {
  try {
    if constexpr (std::is_same_v<std::invoke_result_t<F>, std::error_code>) {
      return f();
    } else {
      f();
      return {};
    }
  } catch (const std::system_error& e) {
    return e.code();
  }
}

// The data of the server `c` is connected to, key by key: its type, its
// serialized value (DUMP) and whether it expires (the TTL itself moves with
// time; whether there is one does not).
inline std::string dataset(Client& c) {
  std::vector<std::string> keys;
  const Value all = c.command("KEYS", "*");
  for (const Value& key : all.as_array()) keys.push_back(key.as_string());
  std::sort(keys.begin(), keys.end());
  std::string out;
  for (const auto& key : keys) {
    out += key + " " + c.command("TYPE", key).as_string() + " " +
           c.command("DUMP", key).to_string() +
           (c.command("PTTL", key).as_integer() >= 0 ? " expires" : " persistent") + "\n";
  }
  return out;
}

struct Env {
  RedisServer server;
  RedisServer auth_server{[] {
    test::RedisServerOptions o;
    o.requirepass = "secret";
    return o;
  }()};
  test::RefusingPort refusing;
  // Read the data of both servers before and after each bad call.
  Client observer{ClientOptions::from_uri(server.uri())};
  Client auth_observer{ClientOptions::from_uri(auth_server.uri())};
  // Per row: how many bad calls were compared, and what they changed.
  int compared = 0;
  std::vector<std::string> changes;

  ClientOptions options() const {
    ClientOptions o = ClientOptions::from_uri(server.uri());
    o.watchdog_timeout = 2s;
    return o;
  }

  // What the bad call `f` reported (code_of), after checking that it left
  // the data of both servers as it found them: a rejected call changes nothing.
  template <class F>
  std::error_code unchanged(F f) {
    const std::string before = dataset(observer) + "--\n" + dataset(auth_observer);
    const std::error_code ec = code_of(std::move(f));
    const std::string after = dataset(observer) + "--\n" + dataset(auth_observer);
    ++compared;
    if (before != after) changes.push_back("before:\n" + before + "after:\n" + after);
    return ec;
  }
};

using Check = std::function<std::error_code(Env&)>;

// f(ClientOptions&) changes good options; the check constructs a Client.
template <class Change>
Check constructing(Change change) {
  return [change](Env& env) {
    ClientOptions o = env.options();
    change(o);
    return env.unchanged([&] { Client c(std::move(o)); });
  };
}

// The bad call f(Client&) on a fresh Client, on one already closed, or on
// one that setup(Client&) prepared first (setup may change the server; the
// bad call after it may not).
template <class F>
Check on_client(F f) {
  return [f](Env& env) {
    Client c(env.options());
    return env.unchanged([&] { return f(c); });
  };
}
template <class F>
Check on_closed_client(F f) {
  return [f](Env& env) {
    Client c(env.options());
    c.close();
    return env.unchanged([&] { return f(c); });
  };
}
template <class Setup, class F>
Check on_client_after(Setup setup, F f) {
  return [setup, f](Env& env) {
    Client c(env.options());
    setup(c);
    return env.unchanged([&] { return f(c); });
  };
}

// Releases a Lease `prepare(Client&)` returns, after `prepare` has done
// whatever the row describes to it.
template <class Prepare>
Check releasing(Prepare prepare) {
  return [prepare](Env& env) {
    Client c(env.options());
    Lease lease = prepare(c);
    return env.unchanged([&] {
      std::error_code ec;
      lease.release(ec);
      return ec;
    });
  };
}

inline void set_a_string(Client& c) {
  c.command("SET", "a-string", "x");
}

using CheckMap = std::map<std::string, Check>;

// Adds the checks `make` returns to the table's (call it from a namespace-
// scope initializer); returns true.
bool register_checks(CheckMap (*make)());
// Every registered check, merged.
CheckMap registered_checks();

}  // namespace distlock::bad_input
