// Quorum: N independent masters (a RedlockGroup's nodes) as one Topology.
// Every script call and command goes to every node at once, on the one I/O
// thread that runs all their connections; the answers are counted as they
// arrive, for at most the node timeout, and the call's rule (QuorumRule)
// turns them into the one reply its caller sees. So the shared machinery
// (acquire loop, watchdog, waiters, pending releases) runs over a group as
// over one server: a lost majority is what a lost reply is to one server.
//
// Subscriptions go to every node's pub/sub connection; a message that
// several nodes deliver (a release publishes on each) reaches the waiters
// once (MessageDedup).
#pragma once

#include <asio/io_context.hpp>
#include <asio/ssl/context.hpp>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "distlock/client_options.hpp"
#include "net/connection.hpp"
#include "topology/quorum_rule.hpp"
#include "topology/topology.hpp"

namespace distlock::topology {

// Drops a pub/sub message that an earlier node already delivered: the same
// channel and payload among the last `capacity` messages. Only payloads
// that name one event (a release id) are deduplicated; callers give those
// a prefix kDedupPrefix. A release is delivered twice: from the first node
// that published it (the earliest wake-up), and again from the node that
// makes it a majority's (`majority` > 1). The first copy can come while a
// majority still holds the lock: the waiter it woke then finds it held and
// waits again, and without the second copy nothing would wake it (the
// release was its last event). I/O thread only.
class MessageDedup {
 public:
  static constexpr std::string_view kDedupPrefix = "rl:";
  explicit MessageDedup(std::size_t capacity = 256, std::size_t majority = 0)
      : capacity_(capacity), majority_(majority) {}
  // True when the message should be delivered.
  bool fresh(std::string_view channel, std::string_view payload);

 private:
  std::size_t capacity_;
  std::size_t majority_;
  std::deque<std::pair<std::string, std::size_t>> recent_;  // key, copies heard
};

class Quorum final : public Topology {
 public:
  // One node per `nodes` (Standalone, Sentinel or Cluster as each says),
  // on `io`. Every node's data connections get `data_handlers`, its
  // pub/sub connection `subscriber_handlers` (on_push deduplicated across
  // the nodes). Throws Error(invalid_argument) as make_topology does.
  Quorum(asio::io_context& io,
         std::vector<ClientOptions> nodes,
         std::chrono::milliseconds node_timeout,
         const net::Connection::Handlers& data_handlers,
         const net::Connection::Handlers& subscriber_handlers);
  ~Quorum() override;

  std::size_t size() const noexcept { return nodes_.size(); }
  std::size_t quorum() const noexcept { return nodes_.size() / 2 + 1; }
  std::chrono::milliseconds node_timeout() const noexcept { return node_timeout_; }
  // The rule for `script`'s calls (before any call; not thread-safe with
  // calls). A script without one is answered by MajorityRule.
  void set_rule(const script::Script& script, std::shared_ptr<const QuorumRule> rule);

  // Throw Error(invalid_argument): a group has no one connection, and a
  // caller that used one would take one node's answer for the majority's.
  // Every call, command and state query goes through the overrides below.
  net::Connection& data_for(std::string_view key) override;
  net::Connection& subscriber_for(std::string_view channel) override;
  std::vector<net::Connection*> subscribers_for(std::string_view channel) override;
  std::uint64_t batch_group(std::string_view key) const override;
  // Starts every node in the background: a node that is down is a vote
  // against until it comes up. Never throws for a node.
  void connect() override;
  void connect_in_background() override;
  std::size_t outstanding() override;
  // A majority of the nodes' data connections serving `key` are up.
  bool connected(std::string_view key) override;
  // Every node's connection serving `key` is up.
  bool all_connected(std::string_view key);
  void close() override;

  std::error_code command(std::string_view route_key,
                          std::span<const std::string_view> args,
                          net::Completion* completion) override;
  std::error_code call(std::optional<script::ScriptCall>& slot,
                       std::string_view route_key,
                       const script::Script& script,
                       std::span<const std::string_view> keys,
                       std::span<const std::string_view> args,
                       net::Completion* next) override;

  // Sends `follow_up` to every node, nobody waiting (an undo).
  void send_to_all(const FollowUp& follow_up);
  Topology& node(std::size_t i) noexcept { return *nodes_[i]; }
  asio::io_context& io() noexcept { return io_; }

 private:
  const QuorumRule& rule_for(const script::Script& script) const;

  asio::io_context& io_;
  const std::chrono::milliseconds node_timeout_;
  // Before the nodes: each Standalone keeps a reference to its options.
  std::vector<std::unique_ptr<ClientOptions>> options_;
  std::vector<std::unique_ptr<asio::ssl::context>> tls_;
  std::vector<std::unique_ptr<Topology>> nodes_;
  std::shared_ptr<MessageDedup> dedup_;
  std::unordered_map<std::string_view, std::shared_ptr<const QuorumRule>> rules_;
  std::atomic<bool> closed_{false};
};

}  // namespace distlock::topology
