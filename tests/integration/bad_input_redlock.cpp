// Redlock's rows of the bad-input table (docs/reliability.md): RedlockGroup's
// constructor and RedlockLock given bad values, each rejected with a clear
// Error before anything is sent, leaving the server's data unchanged.
#include <string>

#include "distlock/redlock.hpp"
#include "integration/bad_input.hpp"

namespace distlock::bad_input {
namespace {

// Constructs a group of env.server with options changed by `change`.
template <class Change>
Check redlock_options(Change change) {
  return [change](Env& env) {
    RedlockOptions o;
    change(o);
    return env.unchanged([&] { RedlockGroup g({env.server.uri()}, o); });
  };
}

// Constructs a group of the URIs `uris(env)` gives.
template <class Uris>
Check redlock_uris(Uris uris) {
  return [uris](Env& env) {
    const std::vector<std::string> list = uris(env);
    return env.unchanged([&] { RedlockGroup g(list); });
  };
}

// The bad call f(RedlockLock&) on a lock of a one-node group of env.server.
template <class F>
Check on_redlock(F f) {
  return [f](Env& env) {
    RedlockGroup g({env.server.uri()});
    RedlockLock l = g.lock("redlock-bad");
    return env.unchanged([&] { return f(l); });
  };
}

// As on_redlock, while this thread holds the lock (released after).
template <class F>
Check while_redlock_held(F f) {
  return [f](Env& env) {
    RedlockGroup g({env.server.uri()});
    RedlockLock l = g.lock("redlock-held");
    l.lock();
    const std::error_code ec = env.unchanged([&] { return f(l); });
    l.unlock();
    return ec;
  };
}

CheckMap redlock_checks() {
  using std::chrono::milliseconds;
  return {
      {"redlock.uris_empty", redlock_uris([](Env&) { return std::vector<std::string>{}; })},
      {"redlock.uri_bad", redlock_uris([](Env& e) {
         return std::vector<std::string>{e.server.uri(), "http://x"};
       })},
      {"redlock.uri_duplicate", redlock_uris([](Env& e) {
         return std::vector<std::string>{e.server.uri(), e.server.uri()};
       })},
      {"redlock.uri_same_server_other_db", redlock_uris([](Env& e) {
         return std::vector<std::string>{e.server.uri(), e.server.uri() + "/1"};
       })},
      {"redlock.uri_same_server_by_name_and_address", redlock_uris([](Env& e) {
         return std::vector<std::string>{"redis://127.0.0.1:" + std::to_string(e.server.port()),
                                         "redis://localhost:" + std::to_string(e.server.port())};
       })},
      {"redlock.lease_too_short", redlock_options([](RedlockOptions& o) { o.lease = 29ms; })},
      {"redlock.node_timeout_zero",
       redlock_options([](RedlockOptions& o) { o.node_timeout = 0ms; })},
      {"redlock.node_timeout_not_below_lease", redlock_options([](RedlockOptions& o) {
         o.lease = 1s;
         o.node_timeout = 1s;
       })},
      {"redlock.drift_negative",
       redlock_options([](RedlockOptions& o) { o.clock_drift_factor = -0.1; })},
      {"redlock.drift_one", redlock_options([](RedlockOptions& o) { o.clock_drift_factor = 1; })},
      {"redlock.retry_delay_zero", redlock_options([](RedlockOptions& o) { o.retry_delay = 0ms; })},
      {"redlock.retry_jitter_negative",
       redlock_options([](RedlockOptions& o) { o.retry_jitter = -1ms; })},
      {"redlock.name_empty",
       [](Env& env) {
         RedlockGroup g({env.server.uri()});
         return env.unchanged([&] { g.lock(""); });
       }},
      {"redlock.name_too_long",
       [](Env& env) {
         RedlockGroup g({env.server.uri()});
         return env.unchanged([&] { g.lock(std::string(64 * 1024 + 1, 'x')); });
       }},
      {"redlock.moved_from_group",
       [](Env& env) {
         RedlockGroup g({env.server.uri()});
         RedlockGroup taker = std::move(g);
         return env.unchanged([&] {
           g.lock("x");  // NOLINT(bugprone-use-after-move): the case under test
         });
       }},
      {"redlock.lock_lease_zero", on_redlock([](RedlockLock& l) { l.lock(0ms); })},
      {"redlock.try_lock_for_wait_negative",
       on_redlock([](RedlockLock& l) { l.try_lock_for(-1ms); })},
      {"redlock.try_acquire_for_lease_negative_ec", on_redlock([](RedlockLock& l) {
         std::error_code ec;
         l.try_acquire_for(0ms, milliseconds(-1), ec);
         return ec;
       })},
      {"redlock.unlock_not_held", on_redlock([](RedlockLock& l) {
         std::error_code ec;
         l.unlock(ec);
         return ec;
       })},
      {"redlock.lock_by_holder", while_redlock_held([](RedlockLock& l) { l.lock(); })},
      {"redlock.after_close",
       [](Env& env) {
         RedlockGroup g({env.server.uri()});
         RedlockLock l = g.lock("redlock-closed");
         g.close();
         return env.unchanged([&] { l.try_lock(); });
       }},
  };
}

const bool registered = register_checks(&redlock_checks);

}  // namespace
}  // namespace distlock::bad_input
