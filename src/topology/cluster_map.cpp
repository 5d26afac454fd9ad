#include "topology/cluster_map.hpp"

#include <charconv>

#include "topology/slot.hpp"

namespace distlock::topology {
namespace {

std::optional<std::int64_t> number(std::string_view text) {
  std::int64_t v = 0;
  const auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

std::optional<std::int64_t> integer_of(const Value& v) {
  if (v.is_integer()) return v.as_integer();
  if (v.is_string()) return number(v.as_string());
  return std::nullopt;
}

bool valid_port(std::int64_t p) {
  return p > 0 && p <= 65535;
}
bool valid_slot(std::int64_t s) {
  return s >= 0 && s < kSlotCount;
}

// The value after `name` in a RESP2 flat map, or null.
const Value* field(const std::vector<Value>& map, std::string_view name) {
  for (std::size_t i = 0; i + 1 < map.size(); i += 2) {
    if (map[i].is_string() && map[i].as_string() == name) return &map[i + 1];
  }
  return nullptr;
}

std::string text_field(const std::vector<Value>& map, std::string_view name) {
  const Value* v = field(map, name);
  return v && v->is_string() ? v->as_string() : std::string();
}

// The serving master of one shard's "nodes": host and port, or nullopt.
std::optional<std::pair<std::string, std::uint16_t>> shard_master(const Value& nodes) {
  if (!nodes.is_array()) return std::nullopt;
  for (const auto& node : nodes.as_array()) {
    if (!node.is_array()) continue;
    const auto& map = node.as_array();
    if (text_field(map, "role") != "master" || text_field(map, "health") == "fail") continue;
    const Value* port = field(map, "port");
    if (!port) port = field(map, "tls-port");
    const std::int64_t p = port ? integer_of(*port).value_or(-1) : -1;
    std::string host = text_field(map, "ip");
    if (host.empty()) host = text_field(map, "endpoint");
    if (!valid_port(p) || host.empty()) continue;
    return std::pair{host, static_cast<std::uint16_t>(p)};
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<SlotRange>> parse_cluster_shards(const Value& reply) {
  if (!reply.is_array()) return std::nullopt;
  std::vector<SlotRange> out;
  for (const auto& shard : reply.as_array()) {
    if (!shard.is_array()) return std::nullopt;
    const auto& map = shard.as_array();
    const Value* slots = field(map, "slots");
    const Value* nodes = field(map, "nodes");
    if (!slots || !nodes || !slots->is_array()) return std::nullopt;
    const auto master = shard_master(*nodes);
    if (!master) continue;
    const auto& bounds = slots->as_array();
    for (std::size_t i = 0; i + 1 < bounds.size(); i += 2) {
      const auto a = integer_of(bounds[i]);
      const auto b = integer_of(bounds[i + 1]);
      if (!a || !b || !valid_slot(*a) || !valid_slot(*b) || *a > *b) return std::nullopt;
      out.push_back({static_cast<std::uint16_t>(*a), static_cast<std::uint16_t>(*b), master->first,
                     master->second});
    }
  }
  return out;
}

std::optional<std::vector<SlotRange>> parse_cluster_slots(const Value& reply) {
  if (!reply.is_array()) return std::nullopt;
  std::vector<SlotRange> out;
  for (const auto& entry : reply.as_array()) {
    if (!entry.is_array() || entry.as_array().size() < 3) return std::nullopt;
    const auto& e = entry.as_array();
    const auto a = integer_of(e[0]);
    const auto b = integer_of(e[1]);
    if (!a || !b || !valid_slot(*a) || !valid_slot(*b) || *a > *b) return std::nullopt;
    if (!e[2].is_array() || e[2].as_array().size() < 2) return std::nullopt;
    const auto& master = e[2].as_array();
    const auto port = integer_of(master[1]);
    if (!master[0].is_string() || !port || !valid_port(*port)) return std::nullopt;
    out.push_back({static_cast<std::uint16_t>(*a), static_cast<std::uint16_t>(*b),
                   master[0].as_string(), static_cast<std::uint16_t>(*port)});
  }
  return out;
}

bool cluster_slots_instead(const Value& shards_reply) {
  if (!shards_reply.is_error()) return false;
  const std::string& e = shards_reply.as_string();
  return e.find("nknown subcommand") != std::string::npos ||
         e.find("nknown command") != std::string::npos || e.starts_with("NOPERM");
}

std::optional<std::vector<SlotRange>> parse_cluster_map(const Value& reply, bool shards) {
  return shards ? parse_cluster_shards(reply) : parse_cluster_slots(reply);
}

std::optional<std::uint16_t> first_uncovered_slot(const std::vector<SlotRange>& ranges) {
  std::vector<bool> covered(kSlotCount, false);
  for (const auto& r : ranges) {
    for (unsigned s = r.first; s <= r.last; ++s) covered[s] = true;
  }
  for (unsigned s = 0; s < kSlotCount; ++s) {
    if (!covered[s]) return static_cast<std::uint16_t>(s);
  }
  return std::nullopt;
}

}  // namespace distlock::topology
