// A plain command (not a script call) sent through a net::Router.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "net/completion.hpp"
#include "net/connection.hpp"
#include "net/router.hpp"

namespace distlock::topology {

// Keeps its arguments so it can be sent again after MOVED, ASK or a
// transient refusal (each means it did not run), as the router says; any
// other outcome goes to `next`. A reply lost with its connection is never
// re-sent. Deletes itself once it has completed `next`.
class RoutedCommand final : public net::Completion {
 public:
  RoutedCommand(net::Router& router,
                std::string route_key,
                std::span<const std::string_view> args,
                net::Completion* next);

  // Submits the command (after ASKING when the last redirection was ASK).
  // On failure nothing was queued and nothing completes: the caller still
  // owns this object.
  std::error_code send(net::Connection& connection);

  void complete(std::error_code ec, Value reply) override;

 private:
  void resend(net::Connection& c);
  void finish(std::error_code ec, Value reply);

  net::Router& router_;
  std::string route_key_;
  std::vector<std::string> args_;
  net::Completion* next_;
  bool asking_ = false;
  unsigned redirects_ = 0;
  std::chrono::milliseconds waited_{0};
};

}  // namespace distlock::topology
