// Five (or N) real masters for the Redlock tests, and the group options
// they use.
#pragma once

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock::redlock_test {

using namespace std::chrono_literals;
using test::RedisServer;

struct Masters {
  std::vector<std::unique_ptr<RedisServer>> servers;
  std::vector<std::unique_ptr<Client>> admin;

  explicit Masters(int n = 5) {
    for (int i = 0; i < n; ++i) {
      servers.push_back(std::make_unique<RedisServer>());
      admin.push_back(std::make_unique<Client>(servers.back()->uri()));
    }
  }
  std::vector<std::string> uris() const {
    std::vector<std::string> out;
    // Short reconnect backoff: a restarted node is back within 100 ms.
    for (const auto& s : servers) out.push_back(s->uri());
    return out;
  }
  // The value of `key` on node i, read through redis-cli ("" when absent):
  // works on a node whose admin connection is gone.
  std::string value(std::size_t i, const std::string& key) const {
    return servers[i]->cli({"GET", key});
  }
  // How many nodes hold `key` with `token`.
  std::size_t holding(const std::string& key, const std::string& token) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < servers.size(); ++i) {
      if (servers[i]->running() && value(i, key) == token) ++n;
    }
    return n;
  }
  // An acquire returns once a majority answered; the other nodes' SETs may
  // still be on their way. Waits (at most 10 s) until `n` running nodes hold
  // `key` with one token and returns it ("" if that never happens).
  std::string settled_token(const std::string& key, std::size_t n) const {
    std::string token;
    const bool settled = test::eventually(
        [&] {
          token.clear();
          for (std::size_t i = 0; i < servers.size() && token.empty(); ++i) {
            if (servers[i]->running()) token = value(i, key);
          }
          return !token.empty() && holding(key, token) == n;
        },
        std::chrono::seconds(10));
    return settled ? token : "";
  }
  // How many running nodes have `key` at all (none may be paused).
  std::size_t with_key(const std::string& key) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < servers.size(); ++i) {
      if (servers[i]->running() && !value(i, key).empty()) ++n;
    }
    return n;
  }
  // How many of the nodes `which` have `key`.
  std::size_t with_key(const std::string& key, std::initializer_list<std::size_t> which) const {
    std::size_t n = 0;
    for (std::size_t i : which) n += value(i, key).empty() ? 0 : 1;
    return n;
  }
};

inline RedlockOptions quick(std::chrono::milliseconds lease = 30s) {
  RedlockOptions o;
  o.lease = lease;
  // Generous for a loaded 2-core machine: only a node that does not answer
  // at all waits it out.
  o.node_timeout = 200ms;
  o.retry_delay = 20ms;
  o.retry_jitter = 20ms;
  return o;
}

// The token a holder's key has on node 0 (all holding nodes agree).
inline std::string token_on(const Masters& m, std::size_t node, const std::string& key) {
  return m.value(node, key);
}
}  // namespace distlock::redlock_test
