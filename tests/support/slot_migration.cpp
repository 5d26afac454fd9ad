#include "support/slot_migration.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/poll_until.hpp"
#include "support/redis_cluster.hpp"

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSlots = 16384;

void expect_ok(const std::string& reply, const std::string& what) {
  if (reply != "OK") throw std::runtime_error(what + " replied: " + reply);
}

}  // namespace

// Target first (IMPORTING), then source (MIGRATING), as redis-cli --cluster
// reshard does: the other order has a moment where the source sends ASK to a
// target that still answers MOVED.
SlotMigration::SlotMigration(RedisCluster& cluster, int slot, RedisServer& from, RedisServer& to)
    : cluster_(&cluster), slot_(slot), from_(&from), to_(&to) {
  if (slot < 0 || slot >= kSlots) {
    throw std::out_of_range("RedisCluster::begin_migration: slot " + std::to_string(slot));
  }
  const std::string s = std::to_string(slot);
  expect_ok(to.cli({"CLUSTER", "SETSLOT", s, "IMPORTING", cluster.node_id(from)}),
            "CLUSTER SETSLOT IMPORTING");
  expect_ok(from.cli({"CLUSTER", "SETSLOT", s, "MIGRATING", cluster.node_id(to)}),
            "CLUSTER SETSLOT MIGRATING");
}

std::size_t SlotMigration::move_keys() {
  if (finished_) throw std::runtime_error("SlotMigration::move_keys: already finished");
  std::size_t moved = 0;
  for (;;) {
    const std::string listed =
        from_->cli({"CLUSTER", "GETKEYSINSLOT", std::to_string(slot_), "100"});
    std::vector<std::string> keys;
    std::istringstream in(listed);
    for (std::string key; std::getline(in, key);) {
      if (!key.empty()) keys.push_back(key);
    }
    if (keys.empty()) return moved;
    std::vector<std::string> args{"MIGRATE", "127.0.0.1", std::to_string(to_->port()), "", "0",
                                  "5000",    "KEYS"};
    args.insert(args.end(), keys.begin(), keys.end());
    expect_ok(from_->cli(args), "MIGRATE");
    moved += keys.size();
  }
}

void SlotMigration::finish() {
  if (finished_) return;
  move_keys();
  const std::string s = std::to_string(slot_);
  const std::string target_id = cluster_->node_id(*to_);
  std::vector<RedisServer*> order{to_, from_};
  for (RedisServer* master : cluster_->masters()) {
    if (master != to_ && master != from_ && master->running()) order.push_back(master);
  }
  for (RedisServer* node : order) {
    expect_ok(node->cli({"CLUSTER", "SETSLOT", s, "NODE", target_id}), "CLUSTER SETSLOT NODE");
  }
  finished_ = true;
  const auto target_owns = [&] {
    for (RedisServer* node : cluster_->live_nodes()) {
      const auto lines = cluster_->cluster_nodes(*node);
      const bool ok = std::any_of(lines.begin(), lines.end(), [&](const auto& l) {
        return l.port == to_->port() && l.is_master() && l.owns(slot_);
      });
      if (!ok) return false;
    }
    return true;
  };
  if (!poll_until(target_owns, Clock::now() + std::chrono::seconds(10))) {
    throw std::runtime_error("slot " + s + " was not given to port " + std::to_string(to_->port()) +
                             " everywhere within 10 s");
  }
  cluster_->wait_until_consistent(std::chrono::seconds(10));
}

}  // namespace distlock::test
