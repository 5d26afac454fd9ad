// Redis Cluster replies, parsed: the slot map (CLUSTER SHARDS, or CLUSTER
// SLOTS on servers before 7.0) and the redirections and transient refusals a
// command can meet (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN).
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

// A MOVED or ASK error reply: "MOVED 6035 127.0.0.1:19002".
struct Redirection {
  bool ask = false;  // ASK: for this one command only, preceded by ASKING
  std::uint16_t slot = 0;
  std::string host;
  std::uint16_t port = 0;
};
std::optional<Redirection> parse_redirection(const Value& reply);

// TRYAGAIN, CLUSTERDOWN, LOADING or MASTERDOWN: the server refused the
// command without running it, and the same command may succeed shortly.
bool is_transient_refusal(const Value& reply);

// The first slot not covered by `ranges`, or nullopt when all 16384 are.
std::optional<std::uint16_t> first_uncovered_slot(const std::vector<SlotRange>& ranges);

}  // namespace distlock::topology
