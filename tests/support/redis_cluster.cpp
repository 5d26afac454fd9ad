#include "support/redis_cluster.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "support/poll_until.hpp"

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::chrono::seconds kStartBound{30};
constexpr int kSlots = 16384;

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

void expect_ok(const std::string& reply, const std::string& what) {
  if (reply != "OK") throw std::runtime_error(what + " replied: " + reply);
}

}  // namespace

RedisCluster::RedisCluster(RedisClusterOptions options) : options_(options) {
  try {
    start_nodes();
    assign_slots_and_meet();
    attach_replicas();
    wait_until_consistent(kStartBound);
    wait_for_replica_links(kStartBound);
  } catch (const std::runtime_error& e) {
    const std::string node_logs = logs();
    nodes_.clear();  // stops every node
    throw std::runtime_error(std::string("RedisCluster: ") + e.what() + "\n" + node_logs);
  }
}

RedisCluster::~RedisCluster() {
  // SIGKILL, not SIGTERM: a cluster master with a replica takes 1.3 s to
  // exit on SIGTERM (7.0 waits for its replicas), and nothing is persisted.
  for (auto& node : nodes_) node->kill();
}

void RedisCluster::start_nodes() {
  RedisServerOptions node_options;
  node_options.cluster = true;
  node_options.config = {
      {"cluster-node-timeout", std::to_string(options_.node_timeout.count())},
      {"cluster-require-full-coverage", options_.require_full_coverage ? "yes" : "no"},
      {"repl-diskless-sync-delay", "0"},
  };
  for (int i = 0; i < 2 * kShards; ++i) {
    nodes_.push_back(std::make_unique<RedisServer>(node_options));
  }
  for (int s = 0; s < kShards; ++s) {
    shards_[static_cast<std::size_t>(s)] =
        Shard{nodes_[static_cast<std::size_t>(s)].get(),
              nodes_[static_cast<std::size_t>(s + kShards)].get(), nullptr};
  }
}

// Recipe B: slots and distinct config epochs first (SET-CONFIG-EPOCH needs a
// node that knows only itself), then MEET with the bus port (it is not
// port + 10000 here).
void RedisCluster::assign_slots_and_meet() {
  for (int s = 0; s < kShards; ++s) {
    const auto i = static_cast<std::size_t>(s);
    expect_ok(nodes_[i]->cli({"CLUSTER", "ADDSLOTSRANGE", std::to_string(kShardFirstSlot[i]),
                              std::to_string(kShardLastSlot[i])}),
              "CLUSTER ADDSLOTSRANGE");
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    expect_ok(nodes_[i]->cli({"CLUSTER", "SET-CONFIG-EPOCH", std::to_string(i + 1)}),
              "CLUSTER SET-CONFIG-EPOCH");
  }
  for (std::size_t i = 1; i < nodes_.size(); ++i) {
    expect_ok(nodes_[0]->cli({"CLUSTER", "MEET", "127.0.0.1", std::to_string(nodes_[i]->port()),
                              std::to_string(nodes_[i]->cluster_bus_port())}),
              "CLUSTER MEET");
  }
  const bool all_known = poll_until(
      [&] {
        return std::all_of(nodes_.begin(), nodes_.end(), [](const auto& n) {
          return n->cli({"CLUSTER", "INFO"}).find("cluster_known_nodes:6") != std::string::npos;
        });
      },
      Clock::now() + kStartBound);
  if (!all_known) throw std::runtime_error("the nodes did not all meet within 30 s");
}

// CLUSTER REPLICATE fails until the replica knows the master: retried.
void RedisCluster::attach_replicas() {
  for (const Shard& shard : shards_) {
    const std::string master_id = node_id(*shard.master);
    std::string reply;
    const bool attached = poll_until(
        [&] {
          reply = shard.replica->cli({"CLUSTER", "REPLICATE", master_id});
          return reply == "OK";
        },
        Clock::now() + kStartBound);
    if (!attached) throw std::runtime_error("CLUSTER REPLICATE replied: " + reply);
  }
}

void RedisCluster::wait_for_replica_links(milliseconds bound) const {
  const bool linked = poll_until(
      [&] {
        return std::all_of(shards_.begin(), shards_.end(), [](const Shard& s) {
          return s.replica == nullptr ||
                 s.replica->cli({"INFO", "replication"}).find("master_link_status:up") !=
                     std::string::npos;
        });
      },
      Clock::now() + bound);
  if (!linked) throw std::runtime_error("the replicas did not all link to their masters in time");
}

void RedisCluster::wait_until_consistent(milliseconds bound) const {
  if (!poll_until([&] { return nodes_agree(); }, Clock::now() + bound)) {
    throw std::runtime_error("the cluster did not become ok and consistent within " +
                             std::to_string(bound.count()) + " ms");
  }
}

// True when every live node says cluster_state:ok and has the same view: the
// fixture's masters own all 16384 slots between them, and each fixture
// replica replicates its shard's master. Failed (dead) nodes are left out.
bool RedisCluster::nodes_agree() const {
  std::set<std::string> views;
  for (RedisServer* node : live_nodes()) {
    if (node->cli({"CLUSTER", "INFO"}).find("cluster_state:ok") == std::string::npos) return false;
    std::map<std::uint16_t, std::string> id_of;
    std::ostringstream view;
    int slots = 0;
    const auto lines = parse_cluster_nodes(node->cli({"CLUSTER", "NODES"}));
    for (const auto& line : lines) id_of[line.port] = line.id;
    for (const Shard& shard : shards_) {
      const auto master = std::find_if(lines.begin(), lines.end(), [&](const auto& l) {
        return l.port == shard.master->port() && l.is_master() && !l.failed() && l.connected;
      });
      if (master == lines.end()) return false;
      view << master->port << ':';
      for (const auto& [first, last] : master->slots) {
        view << first << '-' << last << ',';
        slots += last - first + 1;
      }
      if (shard.replica == nullptr) continue;
      const auto replica = std::find_if(lines.begin(), lines.end(), [&](const auto& l) {
        return l.port == shard.replica->port() && !l.is_master() && !l.failed() && l.connected;
      });
      if (replica == lines.end() || replica->master_id != master->id) return false;
      view << '<' << replica->port << ';';
    }
    if (slots != kSlots) return false;
    views.insert(view.str());
  }
  return views.size() == 1;
}

std::vector<RedisServer*> RedisCluster::live_nodes() const {
  std::vector<RedisServer*> result;
  for (const auto& node : nodes_) {
    if (node->running()) result.push_back(node.get());
  }
  return result;
}

RedisServer* RedisCluster::node_on_port(std::uint16_t port) const {
  for (const auto& node : nodes_) {
    if (node->port() == port) return node.get();
  }
  return nullptr;
}

std::string RedisCluster::node_id(const RedisServer& node) const {
  return node.cli({"CLUSTER", "MYID"});
}

std::vector<RedisServer*> RedisCluster::masters() const {
  std::vector<RedisServer*> result;
  for (const Shard& shard : shards_) result.push_back(shard.master);
  return result;
}

std::vector<RedisServer*> RedisCluster::replicas() const {
  std::vector<RedisServer*> result;
  for (const Shard& shard : shards_) {
    if (shard.replica != nullptr) result.push_back(shard.replica);
  }
  return result;
}

std::vector<RedisServer*> RedisCluster::nodes() const {
  std::vector<RedisServer*> result;
  for (const auto& node : nodes_) result.push_back(node.get());
  return result;
}

RedisServer* RedisCluster::replica_of(const RedisServer& master) const {
  for (const Shard& shard : shards_) {
    if (shard.master == &master) return shard.replica;
  }
  return nullptr;
}

std::vector<ClusterNodeInfo> RedisCluster::cluster_nodes(const RedisServer& node) const {
  return parse_cluster_nodes(node.cli({"CLUSTER", "NODES"}));
}

RedisServer& RedisCluster::master_for_slot(int slot) const {
  if (slot < 0 || slot >= kSlots) {
    throw std::out_of_range("RedisCluster::master_for_slot: slot " + std::to_string(slot));
  }
  for (RedisServer* asked : masters()) {
    if (!asked->running()) continue;
    for (const auto& line : cluster_nodes(*asked)) {
      if (line.is_master() && !line.failed() && line.owns(slot)) {
        if (RedisServer* owner = node_on_port(line.port)) return *owner;
      }
    }
  }
  throw std::runtime_error("no live master owns slot " + std::to_string(slot));
}

int RedisCluster::key_slot(const std::string& key) const {
  for (RedisServer* asked : masters()) {
    if (asked->running()) return std::stoi(asked->cli({"CLUSTER", "KEYSLOT", key}));
  }
  throw std::runtime_error("RedisCluster::key_slot: no live master");
}

void RedisCluster::kill_master(int shard) {
  if (shard < 0 || shard >= kShards) {
    throw std::out_of_range("RedisCluster::kill_master: shard " + std::to_string(shard));
  }
  Shard& s = shards_[static_cast<std::size_t>(shard)];
  if (s.replica == nullptr) {
    throw std::logic_error("RedisCluster::kill_master: shard " + std::to_string(shard) +
                           " has no replica to take over");
  }
  s.master->kill();
}

void RedisCluster::wait_for_failover(int shard, milliseconds bound) {
  if (shard < 0 || shard >= kShards) {
    throw std::out_of_range("RedisCluster::wait_for_failover: shard " + std::to_string(shard));
  }
  Shard& s = shards_[static_cast<std::size_t>(shard)];
  if (s.replica == nullptr || s.master->running()) {
    throw std::logic_error("RedisCluster::wait_for_failover: call kill_master first");
  }
  const auto deadline = Clock::now() + bound;
  RedisServer* replica = s.replica;
  if (!poll_until([&] { return starts_with(replica->cli({"ROLE"}), "master"); }, deadline)) {
    throw std::runtime_error("replica on port " + std::to_string(replica->port()) +
                             " was not promoted within " + std::to_string(bound.count()) + " ms\n" +
                             logs());
  }
  s = Shard{replica, nullptr, s.master};
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  wait_until_consistent(std::max(left, milliseconds(0)));
}

void RedisCluster::restart_old_master(int shard, milliseconds bound) {
  if (shard < 0 || shard >= kShards) {
    throw std::out_of_range("RedisCluster::restart_old_master: shard " + std::to_string(shard));
  }
  Shard& s = shards_[static_cast<std::size_t>(shard)];
  if (s.down == nullptr) {
    throw std::logic_error("RedisCluster::restart_old_master: shard " + std::to_string(shard) +
                           " has no killed master (call kill_master and wait_for_failover)");
  }
  const auto deadline = Clock::now() + bound;
  const auto left = [&] {
    return std::max(std::chrono::duration_cast<milliseconds>(deadline - Clock::now()),
                    milliseconds(0));
  };
  s.down->start();
  s.replica = std::exchange(s.down, nullptr);
  wait_until_consistent(left());
  wait_for_replica_links(left());
}

SlotMigration RedisCluster::begin_migration(int slot, RedisServer& from, RedisServer& to) {
  return SlotMigration(*this, slot, from, to);
}

void RedisCluster::migrate_slot(int slot, RedisServer& from, RedisServer& to) {
  begin_migration(slot, from, to).finish();
}

std::string RedisCluster::logs(std::size_t lines) const {
  std::string result;
  for (const auto& node : nodes_) {
    result += "--- node on port " + std::to_string(node->port()) + " (" +
              (node->running() ? "running" : "down") + "):\n" + node->log_tail(lines) + "\n";
  }
  return result;
}

}  // namespace distlock::test
