#include "sync/redlock_ballot.hpp"

#include <string_view>

#include "script/script.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {

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
  // Each node's call owns a copy of the arguments: a node may answer long
  // after the caller stopped waiting.
  const std::string route = keys.empty() ? std::string() : keys[0];
  auto ballot = std::make_shared<Ballot>(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto ec = nodes[i]->call_detached(
        route, script, keys, args,
        [ballot, i](std::error_code e, Value reply) { ballot->record(i, e, std::move(reply)); });
    if (ec) ballot->record(i, ec, {});  // not queued: it never ran, a vote against
  }
  return ballot;
}

}  // namespace distlock::sync
