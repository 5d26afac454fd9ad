// `distlock status --redlock`: what each node of a Redlock group has under a
// name, and the verdict a majority gives. Pure: the reading is done by
// redlock_commands.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace distlock::cli {

// One node's answer.
struct NodeReport {
  std::string address;  // "host:port" or "unix:path": never a password
  bool reachable = false;
  std::string error;  // why not reachable
  bool exists = false;
  std::string type;                    // the key's TYPE when it exists
  std::string token;                   // a string key's value
  std::optional<std::int64_t> ttl_ms;  // PTTL; -1: no expiry; nullopt: no key
};

struct RedlockStatus {
  std::string name;
  std::vector<NodeReport> nodes;
  std::size_t majority = 0;     // N/2 + 1
  std::size_t held_on = 0;      // nodes whose key holds the most common token
  std::size_t unreachable = 0;  // nodes that did not answer
  // "locked" (held_on >= majority), "not locked" (a majority cannot be held
  // even if every unreachable node held it) or "unknown" (it could be).
  std::string state;
};

// The verdict over the nodes' answers.
RedlockStatus summarize(std::string name, std::vector<NodeReport> nodes);

std::string to_text(const RedlockStatus& s);
std::string to_json(const RedlockStatus& s);

}  // namespace distlock::cli
