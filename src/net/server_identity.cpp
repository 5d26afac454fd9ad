#include "net/server_identity.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>

namespace distlock::net {
namespace {

std::string with_port(const std::string& address, bool v6, std::uint16_t port) {
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

// Every address `host` resolves to as "<address>:<port>"; empty when it
// does not resolve.
std::vector<std::string> resolve_host(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;  // one entry per address, not one per socket type
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return {};
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(found, &::freeaddrinfo);
  std::vector<std::string> out;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    std::string id = address_identity(a->ai_addr, a->ai_addrlen, port);
    if (!id.empty()) out.push_back(std::move(id));
  }
  return out;
}

// The path with symbolic links, "." and ".." resolved as far as it exists;
// the path as given when even that fails.
std::string canonical_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  return ec || canonical.empty() ? path : canonical.string();
}

}  // namespace

std::string server_identity(const ClientOptions& o) {
  if (!o.unix_path.empty()) return "unix:" + o.unix_path;
  const std::string port = std::to_string(o.port);
  if (o.host.find(':') != std::string::npos) return "[" + o.host + "]:" + port;
  return o.host + ":" + port;
}

std::string address_identity(const void* address, std::size_t length, std::uint16_t port) {
  char text[INET6_ADDRSTRLEN] = {};
  sockaddr_storage storage{};
  if (length > sizeof storage) return {};
  std::memcpy(&storage, address, length);
  if (storage.ss_family == AF_INET && length >= sizeof(sockaddr_in)) {
    sockaddr_in v4{};
    std::memcpy(&v4, address, sizeof v4);
    if (!::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text)) return {};
    return with_port(text, false, port);
  }
  if (storage.ss_family != AF_INET6 || length < sizeof(sockaddr_in6)) return {};
  sockaddr_in6 v6{};
  std::memcpy(&v6, address, sizeof v6);
  if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
    // ::ffff:a.b.c.d is the IPv4 server a.b.c.d.
    if (!::inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, sizeof text)) return {};
    return with_port(text, false, port);
  }
  if (!::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text)) return {};
  std::string id = text;
  // A link-local address names a server only together with its interface.
  if (v6.sin6_scope_id != 0) id += "%" + std::to_string(v6.sin6_scope_id);
  return with_port(id, true, port);
}

bool ServerIdentity::same_server(const ServerIdentity& other) const {
  // Both sorted: a shared element is found in one merge-like pass.
  auto a = addresses.begin();
  auto b = other.addresses.begin();
  while (a != addresses.end() && b != other.addresses.end()) {
    if (*a == *b) return true;
    *a < *b ? ++a : ++b;
  }
  return false;
}

ServerIdentity resolve_server_identity(const ClientOptions& o) {
  ServerIdentity id{server_identity(o), {}};
  if (!o.unix_path.empty()) {
    id.addresses.push_back("unix:" + canonical_path(o.unix_path));
    return id;
  }
  id.addresses = resolve_host(o.host, o.port);
  if (id.addresses.empty()) id.addresses.push_back(id.text);
  std::sort(id.addresses.begin(), id.addresses.end());
  id.addresses.erase(std::unique(id.addresses.begin(), id.addresses.end()), id.addresses.end());
  return id;
}

}  // namespace distlock::net
