// The contended Redlock scenario of redlock_bench: several processes x
// threads on ONE lock name over the group's masters, distlock's RedlockGroup
// and node redlock v4 (bench/peers/node_redlock5.js) measured the same way.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "args.hpp"

namespace distlock_bench {

struct RedlockContendedConfig {
  std::vector<std::string> uris;   // the masters; uris[0] also holds the counter
  std::vector<std::string> ports;  // the same masters' ports, for the node peer
  int processes = 2;
  int threads = 8;
  double seconds = 10;
  std::string name;  // the one lock name; empty: one per run
  // Milliseconds each thread waits, outside the lock, after a release and
  // before its next acquire. 0: it asks again at once and mostly wins again
  // (barging), so a waiter rarely gets the lock; above the handoff, the lock
  // stands free until a waiter gets it, and the handoff is the waiter's.
  std::int64_t think_ms = 0;
  // distlock's RedlockOptions retry_delay / retry_jitter; negative: the
  // library's defaults.
  std::int64_t retry_delay_ms = -1;
  std::int64_t retry_jitter_ms = -1;
};

// Spawns `processes` copies of this program (redlock_bench
// --contended-child ...), each running `threads` threads on one RedlockLock,
// merges their histories and prints one JSON line of figures.
void run_redlock_contended(const RedlockContendedConfig& config, const std::string& self);

// The same scenario with node redlock: `node node_redlock5.js contended`
// forks the processes; its merged history is analysed by the same code.
// `node_retry` is "matched" (the same retry distribution as distlock's
// effective options), "default" (redlock v4's 200 +- 100 ms) or
// "DELAY,JITTER" in redlock's own terms (delay +- jitter, in ms).
void run_node_redlock_contended(const RedlockContendedConfig& config,
                                const std::string& node_retry);

// The child: its threads acquire, do the critical section and release until
// the end time, then write their records to --out. Returns the exit code.
int run_redlock_contended_child(const Args& args);

}  // namespace distlock_bench
