// redis-cli against any loopback port, for fixtures whose nodes change roles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace distlock::test {

// Runs `redis-cli -h 127.0.0.1 -p <port> <args>` and returns its raw output
// without the final newline, as RedisServer::cli does. Throws
// std::runtime_error when redis-cli fails or takes longer than 10 s.
std::string cli(std::uint16_t port, const std::vector<std::string>& args);

// Runs several commands on ONE connection (redis-cli reading them from
// stdin): for ASKING + a command, or a write + WAIT (WAIT counts only its own
// connection's writes). Returns the replies, one line per reply (or per
// array element), errors as text. Throws like cli().
std::string cli_session(std::uint16_t port, const std::vector<std::vector<std::string>>& commands);

}  // namespace distlock::test
