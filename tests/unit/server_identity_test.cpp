// The identity of the server a ClientOptions names (net/server_identity.hpp).
#include "net/server_identity.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

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

// --- Resolved identities -----------------------------------------------------

ServerIdentity resolved(std::string host, std::uint16_t port = 6379) {
  return resolve_server_identity(tcp(std::move(host), port));
}

ServerIdentity unix_socket(const std::string& path) {
  ClientOptions o;
  o.unix_path = path;
  return resolve_server_identity(o);
}

// Whether /etc/hosts maps `name` to `address` (the deterministic part of
// name resolution on a test machine; DNS is not consulted for it).
bool hosts_maps(const std::string& address, const std::string& name) {
  std::ifstream hosts("/etc/hosts");
  std::string line;
  while (std::getline(hosts, line)) {
    std::istringstream fields(line.substr(0, line.find('#')));
    std::string first;
    std::string alias;
    if (!(fields >> first) || first != address) continue;
    while (fields >> alias) {
      if (alias == name) return true;
    }
  }
  return false;
}

TEST(ServerIdentity, LocalhostAndItsLoopbackAddressAreOneServer) {
  if (!hosts_maps("127.0.0.1", "localhost")) GTEST_SKIP() << "/etc/hosts does not map localhost";
  const ServerIdentity name = resolved("localhost");
  const ServerIdentity address = resolved("127.0.0.1");
  EXPECT_TRUE(name.same_server(address));
  EXPECT_TRUE(address.same_server(name));
  EXPECT_EQ(name.text, "localhost:6379") << "messages keep the name as configured";
}

TEST(ServerIdentity, LocalhostAndTheIpv6LoopbackAreOneServerWhereHostsSaysSo) {
  if (!hosts_maps("::1", "localhost")) GTEST_SKIP() << "/etc/hosts does not map localhost to ::1";
  EXPECT_TRUE(resolved("localhost").same_server(resolved("::1")));
}

TEST(ServerIdentity, TwoLoopbackAddressesAreTwoServers) {
  EXPECT_FALSE(resolved("127.0.0.1").same_server(resolved("127.0.0.2")));
}

TEST(ServerIdentity, OneAddressOnTwoPortsIsTwoServers) {
  EXPECT_FALSE(resolved("127.0.0.1", 6379).same_server(resolved("127.0.0.1", 6380)));
}

TEST(ServerIdentity, TwoSpellingsOfOneIpv6AddressAreOneServer) {
  EXPECT_TRUE(resolved("::1").same_server(resolved("0:0:0:0:0:0:0:1")));
  EXPECT_EQ(resolved("0:0:0:0:0:0:0:1").addresses, std::vector<std::string>{"[::1]:6379"});
}

TEST(ServerIdentity, AnIpv4MappedIpv6AddressIsItsIpv4Server) {
  EXPECT_TRUE(resolved("::ffff:127.0.0.1").same_server(resolved("127.0.0.1")));
}

TEST(ServerIdentity, ANameThatDoesNotResolveFallsBackToItsTextWithoutThrowing) {
  ServerIdentity id;
  ASSERT_NO_THROW(id = resolved("no-such-host.invalid"));
  EXPECT_EQ(id.addresses, std::vector<std::string>{"no-such-host.invalid:6379"});
  EXPECT_TRUE(id.same_server(resolved("no-such-host.invalid")));
  EXPECT_FALSE(id.same_server(resolved("no-such-host.invalid", 6380)));
  EXPECT_FALSE(id.same_server(resolved("127.0.0.1")));
}

TEST(ServerIdentity, AUnixSocketReachedThroughASymlinkIsOneServer) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("server-identity-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "run");
  std::ofstream(dir / "run" / "redis.sock").put('x');
  std::filesystem::create_directory_symlink(dir / "run", dir / "link");
  const ServerIdentity real = unix_socket((dir / "run" / "redis.sock").string());
  EXPECT_TRUE(real.same_server(unix_socket((dir / "link" / "redis.sock").string())));
  EXPECT_TRUE(real.same_server(unix_socket((dir / "run" / ".." / "run" / "redis.sock").string())));
  EXPECT_FALSE(real.same_server(unix_socket((dir / "run" / "other.sock").string())));
  std::filesystem::remove_all(dir);
}

TEST(ServerIdentity, AUnixSocketPathThatDoesNotExistIsComparedAsWritten) {
  const ServerIdentity id = unix_socket("/no/such/dir/redis.sock");
  EXPECT_EQ(id.addresses, std::vector<std::string>{"unix:/no/such/dir/redis.sock"});
  EXPECT_EQ(id.text, "unix:/no/such/dir/redis.sock");
}

TEST(ServerIdentity, AnAddressIdentityIsItsNumericAddressAndPort) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  ASSERT_EQ(::inet_pton(AF_INET, "10.1.2.3", &v4.sin_addr), 1);
  EXPECT_EQ(address_identity(&v4, sizeof v4, 7000), "10.1.2.3:7000");
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  ASSERT_EQ(::inet_pton(AF_INET6, "fe80::1", &v6.sin6_addr), 1);
  EXPECT_EQ(address_identity(&v6, sizeof v6, 7000), "[fe80::1]:7000");
  v6.sin6_scope_id = 2;
  EXPECT_EQ(address_identity(&v6, sizeof v6, 7000), "[fe80::1%2]:7000")
      << "a link-local address on another interface is another server";
  sockaddr unknown{};
  unknown.sa_family = AF_UNIX;
  EXPECT_EQ(address_identity(&unknown, sizeof unknown, 7000), "");
}

}  // namespace
}  // namespace distlock::net
