// Lua scripts: embedded sources, SHA1 computed once, EVALSHA with a single
// EVAL fallback on NOSCRIPT.
#pragma once

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "distlock/value.hpp"
#include "net/completion.hpp"
#include "net/router.hpp"

namespace distlock::net {
class Connection;
}  // namespace distlock::net

namespace distlock::script {

struct Script {
  std::string_view name;
  std::string_view source;
  std::string sha1;  // lowercase hex
};

// Builds a Script; computes the SHA1 of `source` (OpenSSL).
Script make_script(std::string_view name, std::string_view source);

// Appends `EVALSHA sha numkeys keys... args...` (or EVAL with the source).
// Keys and arguments go only as KEYS/ARGV, never into the script text.
void encode_evalsha(std::string& out,
                    const Script& s,
                    std::span<const std::string_view> keys,
                    std::span<const std::string_view> args);
void encode_eval(std::string& out,
                 const Script& s,
                 std::span<const std::string_view> keys,
                 std::span<const std::string_view> args);

// True for the server's NOSCRIPT error reply.
bool is_noscript(const Value& reply);

// Told when a ScriptCall has its final outcome, just before its `next` is
// (the coalescer sends the operations that waited behind it).
class CallWatcher {
 public:
  virtual void call_finished() = 0;

 protected:
  ~CallWatcher() = default;
};

// One script call. Sends EVALSHA; when the server answers NOSCRIPT (after
// SCRIPT FLUSH or a restart) it sends EVAL once, which runs and caches the
// script, then forwards the outcome to `next`. NOSCRIPT means the script did
// not run, so the retry cannot run it twice.
//
// With a `router` (Cluster), a MOVED or ASK reply sends the call again to
// the node it names (ASK: preceded by ASKING on that connection), and
// TRYAGAIN / CLUSTERDOWN / LOADING / MASTERDOWN send it again after a
// backoff, within the router's bounds; `next` sees only the final outcome.
// All of those replies mean the script did not run.
//
// `keys` and `args` must stay valid until `next` completes.
class ScriptCall final : public net::Completion {
 public:
  ScriptCall(net::Connection& connection,
             const Script& script,
             std::span<const std::string_view> keys,
             std::span<const std::string_view> args,
             net::Completion* next,
             net::Router* router = nullptr,
             std::string_view route_key = {})
      : connection_(&connection),
        script_(script),
        keys_(keys),
        args_(args),
        next_(next),
        router_(router),
        route_key_(route_key) {}

  // Submits the EVALSHA. On failure to queue, returns the error and `next`
  // is not called.
  std::error_code start();

  void complete(std::error_code ec, Value reply) override;

  // Whether the call went out more than once (NOSCRIPT, or a redirection):
  // a command queued behind its first send (WAIT) did not follow it.
  bool resent() const noexcept { return retried_ || resent_; }

  // Set before start(): `watcher` hears of the final outcome first.
  void watch(CallWatcher* watcher) noexcept { watcher_ = watcher; }
  // Set before start(): the first send's command_timeout counts from
  // `since` (when the call was made, before it waited to be sent).
  void made_at(std::chrono::steady_clock::time_point since) noexcept { since_ = since; }

 private:
  void finish(std::error_code ec, Value reply);
  // Sends EVALSHA (or EVAL after NOSCRIPT), prefixed with ASKING when asked;
  // reports a failure to queue to `next`.
  void send(bool eval);
  bool redirected(const Value& reply);

  net::Connection* connection_;
  const Script& script_;
  std::span<const std::string_view> keys_;
  std::span<const std::string_view> args_;
  net::Completion* next_;
  CallWatcher* watcher_ = nullptr;
  std::optional<std::chrono::steady_clock::time_point> since_;
  net::Router* router_;
  std::string_view route_key_;
  bool retried_ = false;
  bool asking_ = false;     // the call in flight was sent after ASKING (two replies)
  bool eval_ = false;       // the call in flight is EVAL
  bool resent_ = false;     // redirected or retried after a transient refusal
  unsigned redirects_ = 0;  // MOVED/ASK only
  std::chrono::milliseconds waited_{0};
};

}  // namespace distlock::script
