// The identity of the server a ClientOptions names (net/server_identity.hpp).
#include "net/server_identity.hpp"

#include <gtest/gtest.h>

namespace distlock::net {
namespace {

ClientOptions tcp(std::string host, std::uint16_t port, int db = 0) {
  ClientOptions o;
  o.host = std::move(host);
  o.port = port;
  o.db = db;
  return o;
}

TEST(ServerIdentity, ATcpServerIsItsHostAndPort) {
  EXPECT_EQ(server_identity(tcp("10.0.0.5", 6380)), "10.0.0.5:6380");
}

TEST(ServerIdentity, AnIpv6HostIsBracketedSoItsColonsStayApartFromThePort) {
  EXPECT_EQ(server_identity(tcp("::1", 6379)), "[::1]:6379");
}

TEST(ServerIdentity, AUnixSocketIsItsPathWhateverTheHostAndPort) {
  ClientOptions o = tcp("10.0.0.5", 6380);
  o.unix_path = "/run/redis.sock";
  EXPECT_EQ(server_identity(o), "unix:/run/redis.sock");
}

TEST(ServerIdentity, TwoDatabasesOfOneServerAreOneServer) {
  EXPECT_EQ(server_identity(tcp("h", 6379, 0)), server_identity(tcp("h", 6379, 3)));
}

TEST(ServerIdentity, AnotherPortIsAnotherServer) {
  EXPECT_NE(server_identity(tcp("h", 6379)), server_identity(tcp("h", 6380)));
}

}  // namespace
}  // namespace distlock::net
