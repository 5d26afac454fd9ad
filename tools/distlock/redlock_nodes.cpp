#include "redlock_nodes.hpp"

#include <map>

#include "distlock/error.hpp"

namespace distlock::cli {
namespace {

std::vector<std::string> split_at_commas(const std::string& list) {
  std::vector<std::string> out;
  std::string::size_type start = 0;
  for (;;) {
    const auto comma = list.find(',', start);
    out.push_back(list.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace

std::string node_address(const ClientOptions& options) {
  if (!options.unix_path.empty()) return "unix:" + options.unix_path;
  const bool v6 = options.host.find(':') != std::string::npos;
  return (v6 ? "[" + options.host + "]" : options.host) + ":" + std::to_string(options.port);
}

std::optional<RedlockNodes> parse_redlock_nodes(const std::string& list, std::string& error) {
  if (list.empty()) {
    error = "--redlock: the list of node URIs is empty (give URI,URI,...)";
    return std::nullopt;
  }
  RedlockNodes nodes;
  std::map<std::string, std::size_t> seen;
  for (const std::string& uri : split_at_commas(list)) {
    const std::string which = "--redlock: node URI #" + std::to_string(nodes.uris.size() + 1);
    if (uri.empty()) {
      error = which + " is empty";
      return std::nullopt;
    }
    try {
      nodes.options.push_back(ClientOptions::from_uri(uri));
    } catch (const Error& e) {
      // from_uri's message never contains the password.
      error = which + " does not parse: " + e.what();
      return std::nullopt;
    }
    if (nodes.options.back().backend != ClientOptions::Backend::redis) {
      error = which + " is not a Redis URI (Redlock runs over independent Redis masters)";
      return std::nullopt;
    }
    if (nodes.options.back().deployment != ClientOptions::Deployment::standalone) {
      error = which + " is not a single server (Redlock needs independent masters)";
      return std::nullopt;
    }
    const std::string address = node_address(nodes.options.back());
    if (auto [at, fresh] = seen.emplace(address, nodes.uris.size()); !fresh) {
      error = which + " names the same server as node URI #" + std::to_string(at->second + 1) +
              " (" + address + "); Redlock needs independent masters";
      return std::nullopt;
    }
    nodes.uris.push_back(uri);
    nodes.addresses.push_back(address);
  }
  return nodes;
}

}  // namespace distlock::cli
