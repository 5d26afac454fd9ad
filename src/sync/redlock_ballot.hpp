// One Redlock fan-out: the same script sent to every node of a group at once,
// and its answers counted as they arrive. No thread per
// node: each node's Client sends it on its own I/O thread, and the caller
// waits on the Ballot for a decision or the node timeout.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "distlock/value.hpp"

namespace distlock::script {
struct Script;
}
namespace distlock::topology {
class Topology;
}

namespace distlock::sync {

using RedlockClock = std::chrono::steady_clock;

// What one node said.
struct NodeAnswer {
  bool answered = false;  // a reply or a failure came (in time or not)
  std::error_code ec;     // timeout, connection_lost, closed... (reply nil)
  Value reply;            // the script's reply, an error reply included
};

// The answers of one fan-out, filled in by the nodes' I/O threads.
class Ballot {
 public:
  // A decision rule: true when the answers so far settle the question.
  using Decided = std::function<bool(const std::vector<NodeAnswer>&)>;

  explicit Ballot(std::size_t nodes) : answers_(nodes) {}

  // Any thread (a node's I/O thread): node `index` answered.
  void record(std::size_t index, std::error_code ec, Value reply);
  // Blocks until `decided` holds, every node answered, or `deadline`
  // passes; returns the answers known then (later ones are ignored).
  std::vector<NodeAnswer> wait(RedlockClock::time_point deadline, const Decided& decided);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<NodeAnswer> answers_;
  std::size_t count_ = 0;
};

// Sends `script` with `keys` and `args` to every topology in `nodes` (one
// per node), each answer recorded in the returned Ballot. A node that cannot
// queue it (closed, queue full) is recorded at once as failed. Each node's
// call keeps its own copy of the arguments until that node has answered.
std::shared_ptr<Ballot> fan_out(const std::vector<topology::Topology*>& nodes,
                                const script::Script& script,
                                std::vector<std::string> keys,
                                std::vector<std::string> args);

}  // namespace distlock::sync
