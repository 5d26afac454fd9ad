// The commands a connection sends before its first request, and their check.
#pragma once

#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "distlock/client_options.hpp"
#include "distlock/value.hpp"

namespace distlock::net {

// The handshake of a new connection: AUTH (when a password is set), SELECT
// (db other than 0), CLIENT SETNAME (a client name is set), or a PING when
// none of those applies, so that a server speaking another protocol (TLS to a
// plain client) fails the connect rather than the first command; then the
// preloaded commands, whose replies, errors included, are ignored (none when
// options.preload_scripts is false).
//
// Pure: no I/O. The connection writes payload() as one request expecting
// replies() replies and hands the reply to check().
class ConnectionHandshake {
 public:
  ConnectionHandshake(const ClientOptions& options,
                      const std::vector<std::vector<std::string>>& preload);

  // The RESP-encoded commands, in the order above.
  const std::string& payload() const noexcept { return payload_; }
  std::string take_payload() noexcept { return std::move(payload_); }

  // How many replies the server sends: one per command.
  std::uint32_t replies() const noexcept { return static_cast<std::uint32_t>(steps_.size()); }

  // Checks the reply to payload(): the one reply when replies() is 1, else
  // the array of them. The first error reply to a required command fails the
  // handshake: errc::auth_failed for AUTH, errc::connection_failed for the
  // others, with a message naming the step (and the user, never the
  // password) and the server's error text. Clears `message` on success.
  std::error_code check(Value reply, std::string& message) const;

 private:
  std::string payload_;
  // One description per command ("AUTH user 'alice'", "SELECT 2"); empty for
  // a preloaded command, whose error is ignored.
  std::vector<std::string> steps_;
};

}  // namespace distlock::net
