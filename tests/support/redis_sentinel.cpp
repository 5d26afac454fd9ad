#include "support/redis_sentinel.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "support/poll_until.hpp"

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::chrono::seconds kStartBound{30};

// redis-cli's raw output of a flat field/value array (SENTINEL MASTER).
std::map<std::string, std::string> fields(const std::string& text) {
  std::map<std::string, std::string> result;
  std::istringstream in(text);
  for (std::string name, value; std::getline(in, name) && std::getline(in, value);) {
    result[name] = value;
  }
  return result;
}

bool is_master(const RedisServer& node) {
  return node.running() && node.cli({"ROLE"}).rfind("master", 0) == 0;
}

bool link_up(const RedisServer& replica) {
  return replica.cli({"INFO", "replication"}).find("master_link_status:up") != std::string::npos;
}

RedisServerOptions data_node_options() {
  RedisServerOptions options;
  options.config = {{"repl-diskless-sync-delay", "0"}};
  return options;
}

}  // namespace

RedisSentinelSet::RedisSentinelSet() {
  try {
    first_ = std::make_unique<RedisServer>(data_node_options());
    RedisServerOptions replica_options = data_node_options();
    replica_options.config.emplace_back("replicaof", "127.0.0.1 " + std::to_string(first_->port()));
    second_ = std::make_unique<RedisServer>(replica_options);
    master_ = first_.get();
    replica_ = second_.get();
    for (int i = 0; i < kSentinels; ++i) sentinels_.push_back(start_sentinel());
    const bool ready = poll_until([&] { return link_up(*replica_) && sentinels_see(*master_, 1); },
                                  Clock::now() + kStartBound);
    if (!ready)
      throw std::runtime_error(
          "the sentinels did not all see the master, its replica "
          "and each other within 30 s");
  } catch (const std::runtime_error& e) {
    const std::string all_logs = logs();
    sentinels_.clear();
    second_.reset();
    first_.reset();
    throw std::runtime_error(std::string("RedisSentinelSet: ") + e.what() + "\n" + all_logs);
  }
}

RedisSentinelSet::~RedisSentinelSet() {
  for (auto& sentinel : sentinels_) sentinel->kill();
  if (second_) second_->kill();
  if (first_) first_->kill();
}

std::unique_ptr<RedisServer> RedisSentinelSet::start_sentinel() const {
  RedisServerOptions options;
  options.sentinel = true;
  options.config = {
      {"sentinel", "monitor " + name_ + " 127.0.0.1 " + std::to_string(master_->port()) + " 2"},
      {"sentinel", "down-after-milliseconds " + name_ + " 1000"},
      {"sentinel", "failover-timeout " + name_ + " 3000"},
      {"sentinel", "parallel-syncs " + name_ + " 1"},
  };
  return std::make_unique<RedisServer>(options);
}

// Every running sentinel names `master` with `replicas` replicas and the
// other running sentinels, flags "master" only (no s_down, no failover in
// progress), and, when replicas > 0, sees the replica's link up.
bool RedisSentinelSet::sentinels_see(const RedisServer& master, int replicas) const {
  const auto running = std::count_if(sentinels_.begin(), sentinels_.end(),
                                     [](const auto& s) { return s->running(); });
  for (const auto& sentinel : sentinels_) {
    if (!sentinel->running()) continue;
    auto f = fields(sentinel->cli({"SENTINEL", "MASTER", name_}));
    if (f["port"] != std::to_string(master.port()) || f["flags"] != "master" ||
        f["num-slaves"] != std::to_string(replicas) ||
        f["num-other-sentinels"] != std::to_string(running - 1)) {
      return false;
    }
    if (replicas > 0 &&
        fields(sentinel->cli({"SENTINEL", "REPLICAS", name_}))["master-link-status"] != "ok") {
      return false;
    }
  }
  return true;
}

bool RedisSentinelSet::sentinels_name(const RedisServer& master) const {
  const std::string expected = "127.0.0.1\n" + std::to_string(master.port());
  return std::all_of(sentinels_.begin(), sentinels_.end(), [&](const auto& s) {
    return !s->running() || s->cli({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", name_}) == expected;
  });
}

std::vector<RedisServer*> RedisSentinelSet::sentinels() const {
  std::vector<RedisServer*> result;
  for (const auto& sentinel : sentinels_) result.push_back(sentinel.get());
  return result;
}

std::uint16_t RedisSentinelSet::current_master_port() const {
  for (const auto& sentinel : sentinels_) {
    if (!sentinel->running()) continue;
    const std::string reply = sentinel->cli({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", name_});
    const auto newline = reply.find('\n');
    if (newline != std::string::npos) {
      return static_cast<std::uint16_t>(std::stoi(reply.substr(newline + 1)));
    }
  }
  throw std::runtime_error("no sentinel names a master for " + name_);
}

void RedisSentinelSet::failover(milliseconds bound) {
  const auto deadline = Clock::now() + bound;
  std::string reply;
  // Refused (NOGOODSLAVE) while a sentinel has not yet judged the replica
  // fit, or right after another failover: retried within the bound.
  const bool accepted = poll_until(
      [&] {
        reply = sentinels_.front()->cli({"SENTINEL", "FAILOVER", name_});
        return reply == "OK";
      },
      deadline);
  if (!accepted) throw std::runtime_error("SENTINEL FAILOVER replied: " + reply + "\n" + logs());
  wait_for_promotion(std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
}

void RedisSentinelSet::kill_master(milliseconds bound) {
  master_->kill();
  wait_for_promotion(bound);
}

void RedisSentinelSet::wait_for_promotion(milliseconds bound) {
  const bool promoted =
      poll_until([&] { return is_master(*replica_) && sentinels_name(*replica_); },
                 Clock::now() + std::max(bound, milliseconds(0)));
  if (!promoted) {
    throw std::runtime_error("the sentinels did not promote the replica on port " +
                             std::to_string(replica_->port()) + " in time\n" + logs());
  }
  std::swap(master_, replica_);
}

void RedisSentinelSet::reattach_old_master(milliseconds bound) {
  if (!replica_->running()) {
    throw std::logic_error("RedisSentinelSet::reattach_old_master: the old master is down");
  }
  const std::string reply =
      replica_->cli({"REPLICAOF", "127.0.0.1", std::to_string(master_->port())});
  if (reply.rfind("OK", 0) != 0) throw std::runtime_error("REPLICAOF replied: " + reply);
  if (!poll_until([&] { return link_up(*replica_); }, Clock::now() + bound)) {
    throw std::runtime_error("the old master did not link to the new one in time\n" + logs());
  }
}

std::string RedisSentinelSet::logs(std::size_t lines) const {
  std::string result;
  const auto add = [&](const std::string& what, const RedisServer* server) {
    if (server == nullptr) return;
    result += "--- " + what + " on port " + std::to_string(server->port()) + " (" +
              (server->running() ? "running" : "down") + "):\n" + server->log_tail(lines) + "\n";
  };
  add("data node", first_.get());
  add("data node", second_.get());
  for (const auto& sentinel : sentinels_) add("sentinel", sentinel.get());
  return result;
}

}  // namespace distlock::test
