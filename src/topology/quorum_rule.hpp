// How a Quorum turns its nodes' answers to one call into one reply: the
// rule of a script or a command. Pure logic, no I/O: unit-tested on plain
// answers (tests/unit/quorum_rule_test.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "distlock/value.hpp"

namespace distlock::script {
struct Script;
}

namespace distlock::topology {

// What one node said to one call.
struct NodeAnswer {
  bool answered = false;  // a reply or a failure came before the verdict
  std::error_code ec;     // the call failed (timeout, connection_lost, closed...)
  Value reply;            // the reply (an error reply included) when ec is clear

  // A reply, not a failure, and not an error reply.
  bool replied() const noexcept { return answered && !ec && !reply.is_error(); }
  bool integer(std::int64_t v) const noexcept {
    return replied() && reply.is_integer() && reply.as_integer() == v;
  }
};

// The one outcome the caller of a quorum call sees.
struct Verdict {
  std::error_code ec;
  Value reply;
};

// A call sent to every node after the verdict (an undo), nobody waiting.
struct FollowUp {
  const script::Script* script = nullptr;
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

class QuorumRule {
 public:
  virtual ~QuorumRule() = default;
  // True when `answers` so far already decide the verdict. The default
  // waits for every node (or the node timeout).
  virtual bool settled(std::span<const NodeAnswer> answers, std::size_t quorum) const;
  // The verdict from what came before every node answered or the node
  // timeout passed (an unanswered node counts as a vote against).
  virtual Verdict verdict(std::span<const NodeAnswer> answers, std::size_t quorum) const = 0;
  // Calls to send to every node once the verdict is known, from the call's
  // own keys and arguments; none by default.
  virtual std::vector<FollowUp> follow_up(const Verdict& verdict,
                                          std::span<const std::string> keys,
                                          std::span<const std::string> args) const;
};

// Counts of one call's answers.
struct Tally {
  std::size_t answered = 0;
  std::size_t replied = 0;  // answered without failure or error reply
  std::size_t refused = 0;  // error replies
  const Value* first_error = nullptr;
};
Tally tally(std::span<const NodeAnswer> answers);

// The rule of a command, by its verb:
//  EXISTS  1 when a majority has the key, 0 when a majority has not;
//  PTTL    the longest TTL a majority of nodes still has (the quorum-th
//          largest; -1, no expiry, counts as the longest, -2, no key, as
//          the shortest);
//  others  the reply a majority gave identically.
// Too few answers to tell (or no majority agreeing) is a timeout; a
// majority of error replies is the first of them.
const QuorumRule& command_rule(std::string_view verb);

// The reply a majority gave identically, or timeout.
class MajorityRule : public QuorumRule {
 public:
  Verdict verdict(std::span<const NodeAnswer> answers, std::size_t quorum) const override;
};

}  // namespace distlock::topology
