// The scenarios of distlock-bench. Each prints JSON lines to stdout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "args.hpp"

namespace distlock_bench {

struct Config {
  std::string host = "127.0.0.1";
  int port = 0;
  double seconds = 5;
  // Directory of distlock's Lua scripts: the commands they call are counted
  // by the server too and must not count as round trips.
  std::string lua_dir;
  // The redis-server's pid when it runs on this machine (its schedstat tells
  // how long it waited for its core); 0 when unknown.
  int server_pid = 0;
  std::string uri() const { return "redis://" + host + ":" + std::to_string(port); }
};

// PING round trip of one Client at one thread.
void run_ping(const Config& config);

// lock+unlock pairs on a distinct name per thread, all threads on one Client.
// With `fenced`, through Client::fenced_lock.
void run_uncontended(const Config& config, const std::vector<int>& threads, bool fenced);

// One application thread's worth of coroutines (`coroutines` of them), each
// looping co_await async_acquire + co_await async_release on its own name.
// `executor`: "app-thread" (an io_context run by this thread) or
// "client-io-thread" (the Client's own I/O executor).
void run_async(const Config& config, int coroutines, const std::string& executor);

// `procs` processes x `threads` threads on ONE name; a non-atomic counter in
// Redis is incremented under the lock. Raw acquisitions go to `records`
// when it is not empty. `self` is this program's path (children re-run it).
// With `fair`, through Client::fair_lock (lib "distlock-fair").
void run_contended(const Config& config,
                   const std::string& self,
                   int procs,
                   int threads,
                   const std::string& records,
                   bool fair = false);
// One child process of run_contended (the hidden subcommand).
int run_contended_child(const Config& config, const Args& args);

// `leases` handle-owned leases held for config.seconds with the given
// watchdog timeout: renewal calls, leases per call, client CPU.
void run_watchdog(const Config& config, int leases, int watchdog_ms);

// bench/synchronizers.cpp. `threads` threads on one Client doing
// acquire(1)+release(1) on one Semaphore of `permits` permits (the Client's
// permits), or with `permit_handles` acquire_permit(1) + Permit::release()
// (lib "distlock-permit": each Permit its own holder).
void run_semaphore(const Config& config, int threads, int permits, bool permit_handles);
// `threads` threads on one Client calling try_acquire(1) on one fresh
// RateLimiter of `rate` permits per `interval_ms`: decisions/s, and the
// permits admitted against what the rate allows over the server's clock.
void run_rate_limiter(const Config& config, int threads, int rate, int interval_ms);
// `holdings` Permits of one Semaphore, each its own holding renewed by the
// watchdog, held for config.seconds: renewal script calls per watchdog
// period and holdings renewed per call.
void run_watchdog_permits(const Config& config, int holdings, int watchdog_ms);

}  // namespace distlock_bench
