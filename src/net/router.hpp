// What a request does when a Redis Cluster node answers that another node
// serves its key (MOVED, ASK) or that it cannot serve it right now
// (TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN). Each of those replies means
// the command did not run, so sending it again cannot run it twice.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>

#include "distlock/value.hpp"

namespace distlock::net {

class Connection;

// Where to send a refused command again.
struct Resend {
  Connection* connection = nullptr;
  bool asking = false;                 // prefix ASKING (an ASK redirection; one command only)
  bool redirection = false;            // MOVED or ASK: counts against the redirection limit
  std::chrono::milliseconds delay{0};  // wait this long first (transient refusals)
};

// Implemented by the Cluster topology; null for a single server, where these
// replies never come and are passed to the caller as they are.
class Router {
 public:
  // For `reply` (an error reply to a command routed by `route_key`, after
  // `redirects` earlier MOVED/ASK redirections of it and `waited` of delays
  // for transient refusals, which do not count as redirections): where to
  // resend it, or nullopt to hand the reply to the caller (not a redirection,
  // or the bounds are exhausted). Any thread.
  virtual std::optional<Resend> resend(const Value& reply,
                                       std::string_view route_key,
                                       unsigned redirects,
                                       std::chrono::milliseconds waited) = 0;
  // Runs `f(true)` on the I/O thread after `delay`, or `f(false)` once the
  // topology closes first.
  virtual void after(std::chrono::milliseconds delay, std::function<void(bool)> f) = 0;

 protected:
  ~Router() = default;
};

}  // namespace distlock::net
