#include "support/redis_cluster.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "support/process.hpp"

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::chrono::seconds kCliBound{10};
constexpr std::chrono::seconds kStartBound{30};
constexpr int kSlots = 16384;

// Polls pred (every 10 ms: each poll spawns redis-cli, 3-5 ms) until true or
// bound passes. Cluster state has no event to await from outside.
// A redis-cli that fails counts as "not yet": the sentinels' promotion sends
// CLIENT KILL TYPE normal to the promoted replica, which reset a poll's
// connection (seen under ctest -j3), and a node may die between the
// running() check and the poll. A persistent failure ends in the timeout.
template <class Pred>
bool poll_until(Pred pred, Clock::time_point deadline) {
  for (;;) {
    try {
      if (pred()) return true;
    } catch (const std::exception&) {
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

void expect_ok(const std::string& reply, const std::string& what) {
  if (reply != "OK") throw std::runtime_error(what + " replied: " + reply);
}

// Double-quoted for redis-cli's line parser (sdssplitargs).
std::string quoted(const std::string& arg) {
  std::string result = "\"";
  for (const char c : arg) {
    if (c == '"' || c == '\\') result += '\\';
    result += c;
  }
  return result + "\"";
}

std::pair<int, int> parse_range(const std::string& field) {
  const auto dash = field.find('-');
  if (dash == std::string::npos) return {std::stoi(field), std::stoi(field)};
  return {std::stoi(field.substr(0, dash)), std::stoi(field.substr(dash + 1))};
}

ClusterNodeInfo parse_node_line(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  if (fields.size() < 8) throw std::runtime_error("CLUSTER NODES line: " + line);
  ClusterNodeInfo node;
  node.id = fields[0];
  const auto colon = fields[1].find(':');
  const auto at = fields[1].find('@');
  if (colon == std::string::npos || at == std::string::npos || at < colon) {
    throw std::runtime_error("CLUSTER NODES address: " + line);
  }
  const std::string port = fields[1].substr(colon + 1, at - colon - 1);
  node.port = static_cast<std::uint16_t>(port.empty() ? 0 : std::stoi(port));
  node.flags = fields[2];
  node.master_id = fields[3];
  node.connected = fields[7] == "connected";
  for (std::size_t i = 8; i < fields.size(); ++i) {
    if (fields[i].front() != '[') node.slots.push_back(parse_range(fields[i]));
  }
  return node;
}

}  // namespace

bool ClusterNodeInfo::is_master() const {
  return flags.find("master") != std::string::npos;
}

bool ClusterNodeInfo::failed() const {
  std::istringstream in(flags);
  for (std::string flag; std::getline(in, flag, ',');) {
    if (flag == "fail" || flag == "noaddr") return true;
  }
  return false;
}

bool ClusterNodeInfo::owns(int slot) const {
  return std::any_of(slots.begin(), slots.end(),
                     [slot](const auto& r) { return r.first <= slot && slot <= r.second; });
}

std::vector<ClusterNodeInfo> parse_cluster_nodes(const std::string& text) {
  std::vector<ClusterNodeInfo> result;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) result.push_back(parse_node_line(line));
  }
  return result;
}

std::string cli(std::uint16_t port, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"redis-cli", "-h", "127.0.0.1", "-p", std::to_string(port)};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string output = run_capture(argv, kCliBound);
  if (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

std::string cli_session(std::uint16_t port, const std::vector<std::vector<std::string>>& commands) {
  // ChildProcess gives children /dev/null as stdin, so a shell redirects the
  // commands from a file.
  std::string path = "/tmp/distlock-cli-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw std::runtime_error("mkstemp " + path);
  ::close(fd);
  {
    std::ofstream file(path);
    for (const auto& command : commands) {
      for (const auto& arg : command) file << quoted(arg) << ' ';
      file << '\n';
    }
  }
  std::string output;
  try {
    output = run_capture(
        {"sh", "-c", "exec redis-cli -h 127.0.0.1 -p \"$0\" < \"$1\"", std::to_string(port), path},
        kCliBound);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  ::unlink(path.c_str());
  if (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

// ---- RedisCluster ----

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

// ---- SlotMigration ----

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
