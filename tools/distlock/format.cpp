// JSON and text renderings of an Entry (inspect.hpp). The JSON is written by
// hand: a few escapes are all it needs.
#include <cstdio>
#include <sstream>

#include "inspect.hpp"

namespace distlock::cli {
namespace {

std::string json_int(const std::optional<std::int64_t>& v) {
  return v ? std::to_string(*v) : "null";
}

std::string ttl_text(const std::optional<std::int64_t>& ttl) {
  if (!ttl) return "-";
  if (*ttl < 0) return "no expiry";
  return std::to_string(*ttl) + " ms";
}

}  // namespace

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else {
          out += c;  // UTF-8 passes through; invalid bytes are the key's own
        }
    }
  }
  return out + "\"";
}

std::string to_json(const Entry& e) {
  std::ostringstream o;
  o << "{\"name\":" << json_string(e.name) << ",\"kind\":" << json_string(e.kind)
    << ",\"locked\":" << (e.holders.empty() ? "false" : "true") << ",\"holders\":[";
  for (std::size_t i = 0; i < e.holders.size(); ++i) {
    const Holder& h = e.holders[i];
    o << (i ? "," : "") << "{\"id\":" << json_string(h.id) << ",\"count\":" << h.count;
    if (!h.role.empty()) o << ",\"role\":" << json_string(h.role);
    if (i == 0 && !e.holder_node.empty()) {
      o << ",\"node\":" << json_string(e.holder_node)
        << ",\"fencing_token\":" << json_int(e.holder_czxid);
    }
    o << "}";
  }
  o << "],\"held_for_ms\":null,\"ttl_ms\":" << json_int(e.ttl_ms)
    << ",\"waiters\":" << json_int(e.waiters) << ",\"queue\":[";
  for (std::size_t i = 0; i < e.queue.size(); ++i) o << (i ? "," : "") << json_string(e.queue[i]);
  o << "],\"fencing_counter\":" << json_int(e.fencing_counter);
  if (!e.path.empty()) o << ",\"backend\":\"zookeeper\",\"path\":" << json_string(e.path);
  if (e.value) o << ",\"value\":" << *e.value;
  if (!e.mode.empty()) o << ",\"mode\":" << json_string(e.mode);
  if (!e.fields.empty()) {
    o << ",\"fields\":{";
    for (std::size_t i = 0; i < e.fields.size(); ++i) {
      o << (i ? "," : "") << json_string(e.fields[i].first) << ":"
        << json_string(e.fields[i].second);
    }
    o << "}";
  }
  o << "}";
  return o.str();
}

namespace {

// A ZooKeeper lock (e.path set): its node, fencing token and queue; the
// session is its lease (no TTL).
std::string zookeeper_text(const Entry& e) {
  std::ostringstream o;
  if (e.kind == "none") {
    o << e.name << ": no lock node in " << e.path << " (not held)\n";
    return o.str();
  }
  o << e.name << ": " << e.kind << "\n";
  o << "  path:     " << e.path << "\n";
  for (const Holder& h : e.holders) {
    o << "  holder:   " << h.id << " (node " << e.holder_node << ", fencing token "
      << json_int(e.holder_czxid) << ")\n";
  }
  o << "  ttl:      none (held while the holder's ZooKeeper session lives)\n";
  if (e.waiters) o << "  waiters:  " << *e.waiters << "\n";
  for (const auto& q : e.queue) o << "  queued:   " << q << "\n";
  return o.str();
}

}  // namespace

std::string to_text(const Entry& e) {
  if (!e.path.empty()) return zookeeper_text(e);
  std::ostringstream o;
  o << e.name << ": " << (e.kind == "none" ? "no such key (not held)" : e.kind) << "\n";
  if (e.kind == "none") return o.str();
  if (!e.mode.empty()) o << "  mode:     " << e.mode << "\n";
  for (const Holder& h : e.holders) {
    o << "  holder:   " << h.id << " (count " << h.count;
    if (!h.role.empty()) o << ", " << h.role;
    o << ")\n";
  }
  if (e.holders.empty() && e.kind.ends_with("lock")) o << "  holder:   none\n";
  o << "  ttl:      " << ttl_text(e.ttl_ms) << "\n";
  if (e.waiters) o << "  waiters:  " << *e.waiters << "\n";
  for (const auto& q : e.queue) o << "  queued:   " << q << "\n";
  if (e.fencing_counter) o << "  fencing:  last token " << *e.fencing_counter << "\n";
  if (e.value) o << "  value:    " << *e.value << "\n";
  for (const auto& [k, v] : e.fields) o << "  " << k << ": " << v << "\n";
  return o.str();
}

std::string list_line(const Entry& e) {
  std::string line =
      e.name + "\t" + e.kind + "\t" + (e.holders.empty() ? "-" : e.holders.front().id);
  if (!e.path.empty()) line += "\t" + std::to_string(e.waiters.value_or(0));
  return line + "\n";
}

}  // namespace distlock::cli
