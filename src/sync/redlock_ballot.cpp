#include "sync/redlock_ballot.hpp"

#include <optional>
#include <string_view>

#include "script/script.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {
namespace {

// The arguments of one fan-out, shared by its node calls: ScriptCall only
// views them, and a node may answer long after the caller stopped waiting.
struct Request {
  std::vector<std::string> keys;
  std::vector<std::string> args;
  std::vector<std::string_view> key_views;
  std::vector<std::string_view> arg_views;
};

// One node's call. Owns itself from a successful start until its
// completion, which is its last act (ScriptCall forwards as its own last
// act, so deleting it with this object is safe).
class NodeCall final : public net::Completion {
 public:
  NodeCall(std::shared_ptr<Ballot> ballot, std::size_t index, std::shared_ptr<const Request> r)
      : ballot_(std::move(ballot)), index_(index), request_(std::move(r)) {}

  std::error_code start(topology::Topology& node, const script::Script& script) {
    const std::string_view route =
        request_->keys.empty() ? std::string_view() : std::string_view(request_->keys[0]);
    return node.call(call_, route, script, request_->key_views, request_->arg_views, this);
  }

  void complete(std::error_code ec, Value reply) override {
    ballot_->record(index_, ec, std::move(reply));
    delete this;
  }

 private:
  std::shared_ptr<Ballot> ballot_;
  std::size_t index_;
  std::shared_ptr<const Request> request_;
  std::optional<script::ScriptCall> call_;
};

}  // namespace

void Ballot::record(std::size_t index, std::error_code ec, Value reply) {
  {
    std::lock_guard lock(mutex_);
    NodeAnswer& a = answers_.at(index);
    if (a.answered) return;
    a.answered = true;
    a.ec = ec;
    a.reply = std::move(reply);
    ++count_;
  }
  changed_.notify_all();
}

std::vector<NodeAnswer> Ballot::wait(RedlockClock::time_point deadline, const Decided& decided) {
  std::unique_lock lock(mutex_);
  changed_.wait_until(lock, deadline,
                      [&] { return count_ == answers_.size() || (decided && decided(answers_)); });
  return answers_;
}

std::shared_ptr<Ballot> fan_out(const std::vector<topology::Topology*>& nodes,
                                const script::Script& script,
                                std::vector<std::string> keys,
                                std::vector<std::string> args) {
  auto request = std::make_shared<Request>();
  request->keys = std::move(keys);
  request->args = std::move(args);
  for (const auto& k : request->keys) request->key_views.emplace_back(k);
  for (const auto& a : request->args) request->arg_views.emplace_back(a);
  auto ballot = std::make_shared<Ballot>(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto call = std::make_unique<NodeCall>(ballot, i, request);
    if (auto ec = call->start(*nodes[i], script)) {
      ballot->record(i, ec, {});  // not queued: it never ran, a vote against
      continue;
    }
    call.release();  // owned by its completion from here on
  }
  return ballot;
}

}  // namespace distlock::sync
