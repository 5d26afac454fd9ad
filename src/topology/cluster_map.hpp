// The Redis Cluster slot map, parsed from CLUSTER SHARDS (or CLUSTER SLOTS on
// servers before 7.0, or where an ACL denies SHARDS). Pure: no I/O. The
// replies to routed commands are classified by ClusterRedirect.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "distlock/value.hpp"

namespace distlock::topology {

// One master and the slots [first, last] it serves.
struct SlotRange {
  std::uint16_t first = 0;
  std::uint16_t last = 0;
  std::string host;
  std::uint16_t port = 0;
};

// The masters' slot ranges from a CLUSTER SHARDS reply (RESP2: an array of
// flat maps with "slots" and "nodes"). Per shard, the node whose role is
// "master" and whose health is not "fail"; a shard with no such node is left
// out (its slots stay unknown). nullopt when the reply is not that shape.
std::optional<std::vector<SlotRange>> parse_cluster_shards(const Value& reply);

// The same from a CLUSTER SLOTS reply ([first, last, [host, port, id], ...]).
std::optional<std::vector<SlotRange>> parse_cluster_slots(const Value& reply);

// CLUSTER SHARDS refused in a way that CLUSTER SLOTS may not be, so SLOTS is
// asked instead: a server older than 7.0 does not know SHARDS ("unknown
// subcommand", or "unknown command" from older ones), and an ACL may allow
// cluster|slots but not cluster|shards (NOPERM), as some managed services do.
bool cluster_slots_instead(const Value& shards_reply);

// The ranges of a reply to CLUSTER SHARDS (`shards`) or CLUSTER SLOTS.
std::optional<std::vector<SlotRange>> parse_cluster_map(const Value& reply, bool shards);

// The first slot not covered by `ranges`, or nullopt when all 16384 are.
std::optional<std::uint16_t> first_uncovered_slot(const std::vector<SlotRange>& ranges);

}  // namespace distlock::topology
