// Helpers the Sentinel tests share.
#pragma once

#include <string>
#include <string_view>
#include <system_error>

#include "distlock/client.hpp"
#include "distlock/client_options.hpp"
#include "support/redis_sentinel.hpp"

namespace distlock::test {

// Options of a Client that finds the set's master through its 3 sentinels.
inline ClientOptions sentinel_options(const RedisSentinelSet& set) {
  std::string uri = "redis-sentinel://";
  for (const RedisServer* s : set.sentinels())
    uri += "127.0.0.1:" + std::to_string(s->port()) + ",";
  uri.back() = '/';
  return ClientOptions::from_uri(uri + set.master_name());
}

// The port of the server the Client's data connection talks to, 0 while it
// cannot answer (in the middle of a move).
inline int served_port(Client& client) {
  std::error_code ec;
  const std::string_view args[] = {"CONFIG", "GET", "port"};
  const Value reply = client.command(args, ec);
  if (ec || !reply.is_array() || reply.as_array().size() != 2) return 0;
  return std::stoi(reply.as_array()[1].as_string());
}

}  // namespace distlock::test
