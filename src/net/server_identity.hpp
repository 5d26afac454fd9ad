// The identity of the server a ClientOptions names: the one text for "which
// server is this" that MultiLock's canonical order and Redlock's check for
// independent masters both use.
#pragma once

#include <string>

#include "distlock/client_options.hpp"

namespace distlock::net {

// "unix:<path>" for a Unix socket, else "<host>:<port>", an IPv6 host in
// brackets so its colons stay apart from the port ("[::1]:6379"). The same
// text in every process that configures the server the same way. The
// database is not part of it: two databases of one server are one server
// (Redlock needs independent masters); a caller that tells databases apart
// appends "/<db>" (MultiLock's order).
std::string server_identity(const ClientOptions& options);

}  // namespace distlock::net
