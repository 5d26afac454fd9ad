// The identity of the server a ClientOptions names: the one place that
// decides "which server is this" for MultiLock's canonical order and its
// duplicate check, and for Redlock's check for independent masters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "distlock/client_options.hpp"

namespace distlock::net {

// "unix:<path>" for a Unix socket, else "<host>:<port>", an IPv6 host in
// brackets so its colons stay apart from the port ("[::1]:6379"). The same
// text in every process that configures the server the same way. The
// database is not part of it: two databases of one server are one server
// (Redlock needs independent masters); a caller that tells databases apart
// appends "/<db>" (MultiLock's order). Text only: "localhost" and
// "127.0.0.1" are two identities here; resolve_server_identity() tells them
// apart by address.
std::string server_identity(const ClientOptions& options);

// A server as the addresses it is reached at: what the duplicate-node checks
// compare.
struct ServerIdentity {
  // server_identity(options): names the server in messages.
  std::string text;
  // Sorted and unique, never empty. For a TCP host, "<address>:<port>" for
  // every address its name resolves to, numeric ("127.0.0.1:6379",
  // "[::1]:6379"; an IPv4-mapped IPv6 address as its IPv4 address). For a
  // Unix socket, "unix:<canonical path>" (symbolic links, "." and ".."
  // resolved as far as the path exists). For a name that does not resolve,
  // {text}: the server may be down or unknown when a group is made, which
  // must not fail the group.
  std::vector<std::string> addresses;

  // True when the two share an address (and so its port): one server, even
  // when one is named "localhost" and the other "127.0.0.1". Pure.
  bool same_server(const ServerIdentity& other) const;
};

// Resolves options' host name (getaddrinfo: /etc/hosts, DNS) or Unix socket
// path into a ServerIdentity. Blocks while the name is looked up; never
// throws for a name that does not resolve (it falls back to the text). The
// database is not part of it, as for server_identity().
ServerIdentity resolve_server_identity(const ClientOptions& options);

// The "<address>:<port>" text of one resolved socket address (AF_INET or
// AF_INET6; an IPv4-mapped IPv6 address as IPv4); empty for another family.
// Pure: exposed for its unit tests.
std::string address_identity(const void* sockaddr, std::size_t length, std::uint16_t port);

}  // namespace distlock::net
