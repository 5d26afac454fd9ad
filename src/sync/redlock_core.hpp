// The shared state of a RedlockGroup: its nodes (one RedlockNode, a Client's
// parts of its own, each), the attempt / extend / release of one hold on all
// of them at once, the calling threads' holds, and the group's watchdog
// thread. The public RedlockGroup, RedlockLock and RedlockLease are thin
// handles on it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "distlock/redlock.hpp"
#include "runtime/lease_state.hpp"
#include "runtime/metrics.hpp"
#include "sync/redlock_ballot.hpp"
#include "sync/redlock_node.hpp"

namespace distlock::topology {
class Topology;
}

namespace distlock::sync {

class RedlockCore;

// One hold of a Redlock lock: its token on every node, its validity (the
// LeaseState deadline: when the confirming fan-out was first sent plus
// ttl - drift), and the core that extends and releases it.
class RedlockHolding final : public runtime::LeaseState {
 public:
  RedlockHolding(std::shared_ptr<RedlockCore> core,
                 std::string name,
                 std::chrono::milliseconds ttl,
                 bool watchdog);
  const std::shared_ptr<RedlockCore> core;
};

// What an acquire came to: a held (active) holding, or none with ec clear
// (not got: contention, too few nodes, validity <= 0, wait over) or set
// (closed, server_error, invalid_argument) with a message.
struct RedlockOutcome {
  std::shared_ptr<RedlockHolding> holding;
  std::error_code ec;
  std::string message;
};

class RedlockCore : public std::enable_shared_from_this<RedlockCore> {
 public:
  // Validates everything (throws Error(invalid_argument)); no I/O.
  RedlockCore(std::vector<std::string> uris, RedlockOptions options);
  ~RedlockCore();
  RedlockCore(const RedlockCore&) = delete;
  RedlockCore& operator=(const RedlockCore&) = delete;

  // Starts every node's connection in the background and waits until all
  // are up or the longest connect_timeout passes. Never throws for a node.
  void start();

  const RedlockOptions options;
  std::size_t size() const noexcept { return nodes_.size(); }
  std::size_t quorum() const noexcept { return nodes_.size() / 2 + 1; }

  // Attempts until held, an error, close(), or `deadline` (nullopt: no
  // deadline; a passed one makes one attempt). `lease` nullopt is the
  // watchdog lease. A watchdog hold is registered with the watchdog.
  RedlockOutcome acquire(const std::string& name,
                         std::optional<std::chrono::milliseconds> lease,
                         std::optional<RedlockClock::time_point> deadline);
  // Releases `holding` everywhere (first call only; later ones report
  // nothing). Reports as RedlockLease::release(ec).
  std::error_code release(const std::shared_ptr<RedlockHolding>& holding);

  // The calling thread's hold of `name` (null when none), set, or taken out.
  std::shared_ptr<RedlockHolding> thread_hold(const std::string& name) const;
  void set_thread_hold(const std::string& name, std::shared_ptr<RedlockHolding> holding);
  std::shared_ptr<RedlockHolding> take_thread_hold(const std::string& name);

  // Stops the watchdog, marks every hold lost (client_closed), wakes sleeping
  // attempts and closes the nodes. Idempotent.
  void close() noexcept;
  bool closed() const noexcept;

  // The group's metrics (MetricPrimitive::redlock) and a snapshot of them
  // with the nodes' reconnects and commands in flight added. Any thread.
  runtime::Metrics metrics;
  MetricsSnapshot metrics_snapshot() const;

 private:
  // One attempt: the fan-out, the count, the validity check, and the
  // release of everything when it failed.
  RedlockOutcome attempt(const std::string& name, std::optional<std::chrono::milliseconds> lease);
  // Sleeps retry_delay + jitter, at most until `deadline`; false when closed.
  bool sleep_before_retry(std::optional<RedlockClock::time_point> deadline);
  // Sends the compare-and-delete of `token` to every node; waits for the
  // nodes in `await` (all when empty) to answer, at most node_timeout.
  std::vector<NodeAnswer> release_everywhere(const std::string& name,
                                             const std::string& token,
                                             const std::vector<bool>& await);
  std::vector<topology::Topology*> topologies() const;

  // The watchdog thread (started with the first watchdog hold): extends due
  // holds and marks passed ones lost.
  void watch(const std::shared_ptr<RedlockHolding>& holding);
  void unwatch(const RedlockHolding* holding);
  void watchdog_loop();
  void extend(const std::vector<std::shared_ptr<RedlockHolding>>& due);
  void lose(const std::shared_ptr<RedlockHolding>& holding, LeaseLostEvent::Reason reason);

  std::vector<std::unique_ptr<RedlockNode>> nodes_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;  // closing, or a new hold to watch
  bool closed_ = false;
  std::map<std::pair<std::string, std::thread::id>, std::shared_ptr<RedlockHolding>> threads_;
  std::unordered_map<const RedlockHolding*, std::shared_ptr<RedlockHolding>> watched_;
  std::thread watchdog_;
};

// The channel SimpleLock waiters on a node listen to for `name`: a Redlock
// release wakes them as a SimpleLock release would.
std::string redlock_channel(const std::string& name);

}  // namespace distlock::sync
