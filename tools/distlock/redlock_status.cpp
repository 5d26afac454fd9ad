#include "redlock_status.hpp"

#include <map>
#include <sstream>

#include "inspect.hpp"

namespace distlock::cli {

RedlockStatus summarize(std::string name, std::vector<NodeReport> nodes) {
  RedlockStatus s;
  s.name = std::move(name);
  s.nodes = std::move(nodes);
  s.majority = s.nodes.size() / 2 + 1;
  // A hold is one token: keys with different tokens on different nodes are
  // different (failed or competing) attempts, not one lock.
  std::map<std::string, std::size_t> per_token;
  for (const NodeReport& n : s.nodes) {
    if (!n.reachable) {
      ++s.unreachable;
    } else if (n.exists && n.type == "string") {
      s.held_on = std::max(s.held_on, ++per_token[n.token]);
    }
  }
  if (s.held_on >= s.majority) {
    s.state = "locked";
  } else if (s.held_on + s.unreachable < s.majority) {
    s.state = "not locked";
  } else {
    s.state = "unknown";
  }
  return s;
}

namespace {

std::string node_text(const NodeReport& n) {
  if (!n.reachable) return "unreachable (" + n.error + ")";
  if (!n.exists) return "no key";
  std::string out = n.type == "string" ? "token " + n.token : "a " + n.type + " key";
  if (n.ttl_ms && *n.ttl_ms >= 0) return out + ", ttl " + std::to_string(*n.ttl_ms) + " ms";
  return out + ", no expiry";
}

}  // namespace

std::string to_text(const RedlockStatus& s) {
  std::ostringstream o;
  o << s.name << ": redlock over " << s.nodes.size() << " nodes\n";
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    o << "  node " << i + 1 << " " << s.nodes[i].address << ": " << node_text(s.nodes[i]) << "\n";
  }
  o << "  held on " << s.held_on << " of " << s.nodes.size() << " nodes (majority " << s.majority
    << ", " << s.unreachable << " unreachable): " << s.state << "\n";
  return o.str();
}

std::string to_json(const RedlockStatus& s) {
  std::ostringstream o;
  o << "{\"name\":" << json_string(s.name)
    << ",\"kind\":\"redlock\",\"state\":" << json_string(s.state)
    << ",\"locked\":" << (s.state == "locked" ? "true" : "false") << ",\"held_on\":" << s.held_on
    << ",\"size\":" << s.nodes.size() << ",\"majority\":" << s.majority
    << ",\"unreachable\":" << s.unreachable << ",\"nodes\":[";
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const NodeReport& n = s.nodes[i];
    o << (i ? "," : "") << "{\"address\":" << json_string(n.address)
      << ",\"reachable\":" << (n.reachable ? "true" : "false");
    if (!n.reachable) o << ",\"error\":" << json_string(n.error);
    o << ",\"exists\":" << (n.exists ? "true" : "false");
    if (n.exists) o << ",\"type\":" << json_string(n.type);
    if (!n.token.empty()) o << ",\"token\":" << json_string(n.token);
    o << ",\"ttl_ms\":" << (n.ttl_ms ? std::to_string(*n.ttl_ms) : "null") << "}";
  }
  o << "]}";
  return o.str();
}

}  // namespace distlock::cli
