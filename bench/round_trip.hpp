// A server's raw round-trip limit, the reference backends_bench divides by:
// one connection of the server's own C driver, blocking, one thread, the
// cheapest command in a loop (PING; SELECT 1). A lock+unlock pair needs at
// least two round trips, so a pair rate above half of this is impossible.
#pragma once
#include <cstdint>
#include <string>

namespace distlock::bench {

struct RoundTrips {
  double per_s = -1;  // -1: failed (error says why)
  double p50_us = 0;
  std::string error;
};

struct ServerAddress {
  std::string host;
  std::uint16_t port = 0;
  std::string user;
  std::string password;
  std::string database;
};

// Each runs `warmup` seconds uncounted, then counts `seconds`. Never throw.
RoundTrips redis_ping(const ServerAddress& a, double warmup, double seconds);
RoundTrips mariadb_select_1(const ServerAddress& a, double warmup, double seconds);
RoundTrips postgres_select_1(const ServerAddress& a, double warmup, double seconds);

}  // namespace distlock::bench
