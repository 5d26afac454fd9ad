// Small helpers the integration tests share.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "distlock/client.hpp"
#include "distlock/client_options.hpp"
#include "support/redis_server.hpp"

namespace distlock::test {

// Options for a Client of `server`: the watchdog lease `watchdog`, and
// reconnects after 10 ms backing off to 100 ms, so a test that drops a
// connection does not wait for the default backoff.
inline ClientOptions options_for(const RedisServer& server,
                                 std::chrono::milliseconds watchdog = std::chrono::seconds(30)) {
  ClientOptions o = ClientOptions::from_uri(server.uri());
  o.watchdog_timeout = watchdog;
  o.reconnect_min_delay = std::chrono::milliseconds(10);
  o.reconnect_max_delay = std::chrono::milliseconds(100);
  return o;
}

// For tests that count the server's script calls (evalsha_calls) as the
// attempts of concurrent operations: without coalescing each operation is
// one call; with it, operations made while a call is in flight share one.
inline ClientOptions one_call_per_operation(ClientOptions o) {
  o.coalesce = false;
  return o;
}

// Polls `pred` every few ms until it is true or `bound` passes: for state
// that only the server shows (a waiter queued, a key gone), where no event
// can be awaited.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Waits until `token` is stop-requested, at most `bound`.
inline bool wait_for_stop(std::stop_token token, std::chrono::milliseconds bound) {
  std::mutex m;
  std::condition_variable cv;
  bool stopped = false;
  std::stop_callback cb(token, [&] {
    std::lock_guard lock(m);
    stopped = true;
    cv.notify_all();
  });
  std::unique_lock lock(m);
  return cv.wait_for(lock, bound, [&] { return stopped; });
}

// EVALSHA calls the server has run so far (INFO commandstats): how many
// script attempts a call made, for tests that prove a wait slept instead of
// polling.
inline long long evalsha_calls(Client& admin) {
  const std::string stats = admin.command("INFO", "commandstats").as_string();
  const std::string field = "cmdstat_evalsha:calls=";
  const auto at = stats.find(field);
  if (at == std::string::npos) return 0;
  return std::stoll(stats.substr(at + field.size()));
}

}  // namespace distlock::test
