// The --redlock node list: comma-separated URIs of independent masters,
// parsed and checked before any I/O.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "distlock/client_options.hpp"

namespace distlock::cli {

struct RedlockNodes {
  std::vector<std::string> uris;       // as given, in order
  std::vector<ClientOptions> options;  // each URI parsed
  std::vector<std::string> addresses;  // "host:port" or "unix:path": never a password
};

// Splits `list` at its commas (a comma inside a URI is written %2C) and
// parses each URI. nullopt with `error` set (never containing a password)
// for an empty list, an empty entry, a URI that does not parse, a URI that
// is not a standalone Redis server (zookeeper:// included), or two URIs
// naming the same server. No I/O.
std::optional<RedlockNodes> parse_redlock_nodes(const std::string& list, std::string& error);

// "host:port", "[v6]:port" or "unix:path" of a parsed URI.
std::string node_address(const ClientOptions& options);

}  // namespace distlock::cli
