#include "topology/quorum.hpp"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <functional>

#include "distlock/error.hpp"
#include "net/tls_context.hpp"
#include "topology/factory.hpp"

namespace distlock::topology {
namespace {

// One call to every node of a Quorum, and its verdict. Lives on the I/O
// thread: made by the caller, started by a posted handler (so that node
// replies never race the sends), and kept alive by `self_` until every
// node's call has completed (a node may answer long after the verdict; its
// ScriptCall reads the keys and arguments kept here until then).
class QuorumCall final : public std::enable_shared_from_this<QuorumCall> {
 public:
  QuorumCall(Quorum& quorum,
             const QuorumRule& rule,
             const script::Script* script,
             std::string route,
             std::vector<std::string> strings,
             std::size_t key_count,
             net::Completion* next)
      : quorum_(quorum),
        rule_(rule),
        script_(script),
        route_(std::move(route)),
        strings_(std::move(strings)),
        key_count_(key_count),
        next_(next),
        timer_(quorum.io()),
        answers_(quorum.size()),
        nodes_(quorum.size()) {
    views_.assign(strings_.begin(), strings_.end());
  }

  // Sends to every node, then starts the node timeout. I/O thread.
  void start() {
    self_ = shared_from_this();
    const auto keep = self_;
    pending_ = nodes_.size();
    sending_ = true;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      nodes_[i].call = this;
      nodes_[i].index = i;
      if (const auto ec = send(i)) answered(i, ec, Value());
    }
    sending_ = false;
    if (!decided_ && rule_.settled(answers_, quorum_.quorum())) return decide();
    if (decided_) return;
    timer_.expires_after(quorum_.node_timeout());
    timer_.async_wait([weak = weak_from_this()](std::error_code ec) {
      if (ec == asio::error::operation_aborted) return;
      if (const auto call = weak.lock()) call->decide();
    });
  }

 private:
  struct Node final : net::Completion {
    QuorumCall* call = nullptr;
    std::size_t index = 0;
    std::optional<script::ScriptCall> slot;
    void complete(std::error_code ec, Value reply) override {
      call->answered(index, ec, std::move(reply));  // may delete this Node
    }
  };

  std::span<const std::string_view> keys() const { return {views_.data(), key_count_}; }
  std::span<const std::string_view> args() const {
    return std::span<const std::string_view>(views_).subspan(key_count_);
  }
  std::error_code send(std::size_t i) {
    Topology& node = quorum_.node(i);
    if (script_ == nullptr) return node.command(route_, views_, &nodes_[i]);
    return node.call(nodes_[i].slot, route_, *script_, keys(), args(), &nodes_[i]);
  }

  void answered(std::size_t i, std::error_code ec, Value reply) {
    if (!decided_) {
      NodeAnswer& a = answers_[i];
      a.answered = true;
      a.ec = ec;
      a.reply = std::move(reply);
      if (!sending_ && rule_.settled(answers_, quorum_.quorum())) decide();
    }
    if (--pending_ == 0 && decided_) self_.reset();  // may delete this
  }

  void decide() {
    if (decided_) return;
    decided_ = true;
    timer_.cancel();
    const Verdict verdict = rule_.verdict(answers_, quorum_.quorum());
    const std::span<const std::string> all(strings_);
    for (const auto& follow :
         rule_.follow_up(verdict, all.first(key_count_), all.subspan(key_count_))) {
      quorum_.send_to_all(follow);
    }
    if (next_ != nullptr) next_->complete(verdict.ec, verdict.reply);
    if (pending_ == 0) self_.reset();  // may delete this
  }

  Quorum& quorum_;
  const QuorumRule& rule_;
  const script::Script* script_;  // null for a command
  const std::string route_;       // each node routes the call by it
  const std::vector<std::string> strings_;
  std::vector<std::string_view> views_;
  const std::size_t key_count_;
  net::Completion* next_;
  asio::steady_timer timer_;
  std::vector<NodeAnswer> answers_;
  std::vector<Node> nodes_;
  std::shared_ptr<QuorumCall> self_;
  std::size_t pending_ = 0;
  bool sending_ = false;
  bool decided_ = false;
};

// The pub/sub push handler of one node: a message another node delivered
// already is dropped.
net::Connection::Handlers deduplicated(net::Connection::Handlers handlers,
                                       std::shared_ptr<MessageDedup> dedup) {
  if (!handlers.on_push) return handlers;
  handlers.on_push = [push = handlers.on_push, dedup = std::move(dedup)](Value v) {
    if (v.is_array()) {
      const auto& parts = v.as_array();
      if (parts.size() == 3 && parts[1].is_string() && parts[2].is_string() &&
          !dedup->fresh(parts[1].as_string(), parts[2].as_string())) {
        return;
      }
    }
    push(std::move(v));
  };
  return handlers;
}

}  // namespace

bool MessageDedup::fresh(std::string_view channel, std::string_view payload) {
  if (!payload.starts_with(kDedupPrefix)) return true;
  std::string key;
  key.reserve(channel.size() + payload.size() + 1);
  key.append(channel).push_back('\n');
  key.append(payload);
  for (auto& [seen, copies] : recent_) {
    if (seen == key) return ++copies == majority_ && majority_ > 1;
  }
  recent_.emplace_back(std::move(key), 1);
  if (recent_.size() > capacity_) recent_.pop_front();
  return true;
}

Quorum::Quorum(asio::io_context& io,
               std::vector<ClientOptions> nodes,
               std::chrono::milliseconds node_timeout,
               const net::Connection::Handlers& data_handlers,
               const net::Connection::Handlers& subscriber_handlers)
    : io_(io),
      node_timeout_(node_timeout),
      dedup_(std::make_shared<MessageDedup>(256, nodes.size() / 2 + 1)) {
  for (ClientOptions& o : nodes) {
    options_.push_back(std::make_unique<ClientOptions>(std::move(o)));
    tls_.push_back(net::make_tls_context(options_.back()->tls));
    nodes_.push_back(make_topology(io_, *options_.back(), tls_.back().get(), data_handlers,
                                   deduplicated(subscriber_handlers, dedup_)));
  }
}

Quorum::~Quorum() = default;

void Quorum::set_rule(const script::Script& script, std::shared_ptr<const QuorumRule> rule) {
  rules_[script.name] = std::move(rule);
}

const QuorumRule& Quorum::rule_for(const script::Script& script) const {
  static const MajorityRule majority;
  const auto it = rules_.find(script.name);
  return it == rules_.end() ? majority : *it->second;
}

net::Connection& Quorum::data_for(std::string_view) {
  // One connection would be one node's answer taken for the majority's.
  throw Error(errc::invalid_argument, "a Redlock group has no single data connection");
}

net::Connection& Quorum::subscriber_for(std::string_view) {
  throw Error(errc::invalid_argument, "a Redlock group has no single pub/sub connection");
}

std::vector<net::Connection*> Quorum::subscribers_for(std::string_view channel) {
  std::vector<net::Connection*> out;
  out.reserve(nodes_.size());
  for (auto& n : nodes_) out.push_back(&n->subscriber_for(channel));
  return out;
}

std::uint64_t Quorum::batch_group(std::string_view key) const {
  // A batch must share its group on every node (a slot, on a Cluster node).
  std::uint64_t group = 0;
  for (const auto& n : nodes_) group = group * 1000003u + n->batch_group(key);
  return group;
}

void Quorum::connect() {
  connect_in_background();
}

void Quorum::connect_in_background() {
  for (auto& n : nodes_) n->connect_in_background();
}

std::size_t Quorum::outstanding() {
  std::size_t total = 0;
  for (auto& n : nodes_) total += n->outstanding();
  return total;
}

bool Quorum::connected(std::string_view key) {
  std::size_t up = 0;
  for (auto& n : nodes_) up += n->connected(key) ? 1 : 0;
  return up >= quorum();
}

bool Quorum::all_connected(std::string_view key) {
  for (auto& n : nodes_) {
    if (!n->connected(key)) return false;
  }
  return true;
}

void Quorum::close() {
  closed_.store(true);
  for (auto& n : nodes_) n->close();
}

std::error_code Quorum::command(std::string_view route_key,
                                std::span<const std::string_view> args,
                                net::Completion* completion) {
  if (args.empty()) return errc::invalid_argument;
  if (closed_.load()) return errc::closed;
  std::vector<std::string> strings(args.begin(), args.end());
  auto call =
      std::make_shared<QuorumCall>(*this, command_rule(args[0]), nullptr, std::string(route_key),
                                   std::move(strings), 0, completion);
  asio::post(io_, [call] { call->start(); });
  return {};
}

std::error_code Quorum::call(std::optional<script::ScriptCall>&,
                             std::string_view route_key,
                             const script::Script& script,
                             std::span<const std::string_view> keys,
                             std::span<const std::string_view> args,
                             net::Completion* next) {
  if (closed_.load()) return errc::closed;
  std::vector<std::string> strings;
  strings.reserve(keys.size() + args.size());
  strings.assign(keys.begin(), keys.end());
  strings.insert(strings.end(), args.begin(), args.end());
  auto c = std::make_shared<QuorumCall>(*this, rule_for(script), &script, std::string(route_key),
                                        std::move(strings), keys.size(), next);
  asio::post(io_, [c] { c->start(); });
  return {};
}

void Quorum::send_to_all(const FollowUp& follow_up) {
  const std::string route = follow_up.keys.empty() ? std::string() : follow_up.keys.front();
  for (auto& n : nodes_) {
    // Not queued (closing): the key expires with its lease.
    (void)n->call_detached(route, *follow_up.script, follow_up.keys, follow_up.args, {});
  }
}

}  // namespace distlock::topology
