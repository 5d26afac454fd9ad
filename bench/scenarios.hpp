// The scenarios of distlock-bench. Each prints JSON lines to stdout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_util.hpp"

namespace distlock_bench {

struct Config {
  std::string host = "127.0.0.1";
  int port = 0;
  double seconds = 5;
  // Directory of distlock's Lua scripts: the commands they call are counted
  // by the server too and must not count as round trips.
  std::string lua_dir;
  std::string uri() const { return "redis://" + host + ":" + std::to_string(port); }
};

// PING round trip of one Client at one thread.
void run_ping(const Config& config);

// lock+unlock pairs on a distinct name per thread, all threads on one Client.
// With `fenced`, through Client::fenced_lock.
void run_uncontended(const Config& config, const std::vector<int>& threads, bool fenced);

// `procs` processes x `threads` threads on ONE name; a non-atomic counter in
// Redis is incremented under the lock. Raw acquisitions go to `records`
// when it is not empty. `self` is this program's path (children re-run it).
void run_contended(const Config& config,
                   const std::string& self,
                   int procs,
                   int threads,
                   const std::string& records);
// One child process of run_contended (the hidden subcommand).
int run_contended_child(const Config& config, const Args& args);

// `leases` handle-owned leases held for config.seconds with the given
// watchdog timeout: renewal calls, leases per call, client CPU.
void run_watchdog(const Config& config, int leases, int watchdog_ms);

}  // namespace distlock_bench
