// Topology: which connection serves a key. Standalone now; Sentinel, Cluster
// (slot routing, MOVED/ASK) and a Redlock group implement the same interface
// later, so the primitives never know which one they run on.
#pragma once

#include <string_view>

#include "net/connection.hpp"

namespace distlock::topology {

class Topology {
 public:
  virtual ~Topology() = default;
  // The data connection that serves `key` (every key of one primitive hashes
  // to one slot, so one connection serves them all).
  virtual net::Connection& data_for(std::string_view key) = 0;
  // The pub/sub connection for `channel`.
  virtual net::Connection& subscriber_for(std::string_view channel) = 0;
  // Makes the first connections; throws Error on failure.
  virtual void connect() = 0;
  virtual void close() = 0;
};

}  // namespace distlock::topology
