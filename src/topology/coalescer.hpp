// Coalescing (docs/architecture.md, "Coalescing"): script calls of one Client
// to one server (one slot under Cluster) that would wait behind a call in
// flight go out together, as ONE call of a batch script that applies each in
// order and answers each separately.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "net/completion.hpp"
#include "script/batch.hpp"
#include "script/script.hpp"

namespace distlock::runtime {
class Metrics;
}

namespace distlock::topology {

class Topology;

// One per Topology, with a group per batch_group() (the server, or the slot).
// A group sends a call at once when none of its calls is in flight, and
// otherwise keeps it until the call in flight has its outcome; then every
// call kept meanwhile goes out, runs of the same script class as one batch
// call (a run of one as its own call; at most kMaxBatch operations a
// call). So an idle connection never waits
// for company (no timers), and under load the batches grow with it.
//
// Every operation keeps what a call of its own gives: its own reply, an
// error reply (a failed redis.call, a Lua error) for it alone, and the
// batch's transport outcome (timeout, connection_lost, closed) when the
// batch got no reply, exactly as its own call would have had. Commands sent
// to the group with Topology::command while calls wait (WAIT behind an
// acquire) go right after them, so a WAIT covers the batch.
//
// Thread-safe: call() and queue_behind() from any thread; outcomes on the
// I/O thread (or on the calling thread when a send fails at once).
class Coalescer {
 public:
  Coalescer(Topology& topology, runtime::Metrics* metrics);
  ~Coalescer();
  Coalescer(const Coalescer&) = delete;
  Coalescer& operator=(const Coalescer&) = delete;

  // Topology::call for a script that batches (`info`). `slot` holds the
  // call when it goes out alone; `route_key`, `keys`, `args` and `next`
  // must stay valid until `next` completes. An error: not queued, and `next`
  // will not be called.
  std::error_code call(std::optional<script::ScriptCall>& slot,
                       std::string_view route_key,
                       const script::Script& script,
                       script::BatchInfo info,
                       std::span<const std::string_view> keys,
                       std::span<const std::string_view> args,
                       net::Completion* next);

  // When calls of `route_key`'s group wait to go out, queues the command
  // `args` to go right after them and returns true; `completion` then runs
  // exactly once. False: nothing waits, send it as usual.
  bool queue_behind(std::string_view route_key,
                    std::span<const std::string_view> args,
                    net::Completion* completion);

  // Calls of `route_key`'s group waiting behind its call in flight (tests).
  std::size_t waiting(std::string_view route_key);

  // At most this many operations go in one batch call (a longer wait goes
  // out as several calls, pipelined), so one script run stays short.
  static constexpr std::size_t kMaxBatch = 256;

  // Groups are indexed by batch_group() modulo this (a Cluster slot fits).
  static constexpr std::size_t kGroups = 16384;

 private:
  struct Op {
    std::optional<script::ScriptCall>* slot;
    std::string_view route_key;
    const script::Script* script;
    script::BatchInfo info;
    std::span<const std::string_view> keys;
    std::span<const std::string_view> args;
    net::Completion* next;
    std::chrono::steady_clock::time_point made;  // its command_timeout counts from here
  };
  struct Command {
    std::string route_key;
    std::string payload;
    net::Completion* completion;
  };
  class Batch;

  class Group final : public script::CallWatcher {
   public:
    explicit Group(Coalescer& owner) : owner_(owner) {}
    // A call of this group had its outcome: sends what waited meanwhile.
    void call_finished() override;

    Coalescer& owner_;
    std::mutex mutex_;
    unsigned in_flight_ = 0;       // calls of this group sent, outcome not yet in
    std::vector<Op> waiting_;      // kept behind them, in order
    std::vector<Command> behind_;  // commands queued after waiting_
  };

  Group& group(std::string_view route_key);
  // Whether ops[i] starts a new call after the run that starts at `first`:
  // another script class, or the run is kMaxBatch long.
  static bool starts_run(const std::vector<Op>& ops, std::size_t first, std::size_t i);
  // Sends `ops` (taken from `g`, counted in its in_flight_ already as
  // `calls` calls), then `behind`.
  void send(Group& g, std::vector<Op>& ops, std::vector<Command>& behind);
  // Sends ops[first, last), all of one class, as one call; an outcome that
  // cannot be queued goes to each operation at once.
  void send_run(Group& g, std::vector<Op>& ops, std::size_t first, std::size_t last);

  Topology& topology_;
  runtime::Metrics* metrics_;
  std::array<std::atomic<Group*>, kGroups> groups_{};
};

}  // namespace distlock::topology
