// distlock-bench: end-to-end figures of distlock's Lock against a running
// redis-server (scripts/bench.sh starts one). One JSON object per line on
// stdout; progress on stderr.
//
//   distlock-bench ping         --port P [--seconds S]
//   distlock-bench uncontended  --port P [--seconds S] [--threads 1,16,64] [--fenced]
//   distlock-bench contended    --port P [--seconds S] [--procs 2] [--threads 8]
//                               [--records FILE] [--fair]
//   distlock-bench watchdog     --port P [--seconds 15] [--leases 10000]
//                               [--watchdog-ms 3000]
//   distlock-bench async        --port P [--seconds S] [--coroutines 256]
//                               [--executor app-thread|client-io-thread]
//   distlock-bench semaphore    --port P [--seconds S] [--threads 64] [--permits 8]
//                               [--permit-handles]
//   distlock-bench rate_limiter --port P [--seconds S] [--threads 64] [--rate 1000]
//                               [--interval-ms 1000]
//   distlock-bench watchdog_permits --port P [--seconds 15] [--holdings 10000]
//                               [--watchdog-ms 3000]
//
// Common options: --host (default 127.0.0.1), --lua-dir (distlock's Lua
// sources, to tell script-internal commands from round trips), --server-pid
// (the redis-server's pid on this machine, for its run-queue wait).
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "args.hpp"
#include "command_stats.hpp"
#include "distlock/client.hpp"
#include "distlock/lock.hpp"
#include "json_line.hpp"
#include "latency.hpp"
#include "process_stats.hpp"
#include "scenarios.hpp"
#include "server_cpu.hpp"

namespace distlock_bench {
namespace {

struct ThreadResult {
  std::vector<std::int64_t> acquire_ns;
  std::vector<std::int64_t> release_ns;
  bool failed = false;
};

// Runs `threads` threads, each doing lock()+unlock() on its own name until the
// deadline. Returns the per-thread samples.
std::vector<ThreadResult> pairs(
    distlock::Client& client, int threads, bool fenced, double seconds, const std::string& prefix) {
  std::vector<ThreadResult> results(static_cast<std::size_t>(threads));
  std::atomic<bool> go{false};
  std::int64_t deadline = 0;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ThreadResult& r = results[static_cast<std::size_t>(t)];
      r.acquire_ns.reserve(1 << 16);
      r.release_ns.reserve(1 << 16);
      const std::string name = prefix + std::to_string(t);
      distlock::Lock lock = fenced ? client.fenced_lock(name) : client.lock(name);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      try {
        // Bounded in time and in count.
        for (int i = 0; i < 20'000'000; ++i) {
          const std::int64_t t0 = now_ns();
          if (t0 >= deadline) break;
          lock.lock();
          const std::int64_t t1 = now_ns();
          lock.unlock();
          const std::int64_t t2 = now_ns();
          r.acquire_ns.push_back(t1 - t0);
          r.release_ns.push_back(t2 - t1);
        }
      } catch (const std::exception& e) {
        std::cerr << "distlock-bench: thread " << t << ": " << e.what() << "\n";
        r.failed = true;
      }
    });
  }
  deadline = now_ns() + static_cast<std::int64_t>(seconds * 1e9);
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return results;
}

Latency ping_latency(distlock::Client& client, double seconds) {
  std::vector<std::int64_t> ns;
  const std::int64_t deadline = now_ns() + static_cast<std::int64_t>(seconds * 1e9);
  for (int i = 0; i < 5'000'000; ++i) {
    const std::int64_t t0 = now_ns();
    if (t0 >= deadline) break;
    client.command("PING");
    ns.push_back(now_ns() - t0);
  }
  return summarize(ns);
}

// The client commands in `calls` as a JSON object.
std::string commands_json(const std::map<std::string, std::uint64_t>& calls,
                          const std::set<std::string>& inside_lua) {
  JsonLine j;
  for (const auto& [name, n] : calls) {
    if (name != "info" && inside_lua.count(name) == 0) j.add(name, n);
  }
  return j.str();
}

}  // namespace

void run_ping(const Config& config) {
  distlock::Client client(config.uri());
  const Latency l = ping_latency(client, config.seconds);
  JsonLine line;
  line.add("scenario", "ping").add("lib", "distlock").add("threads", 1).add("samples", l.samples);
  add_latency(line, "rtt", l);
  emit(line);
}

void run_uncontended(const Config& config, const std::vector<int>& threads, bool fenced) {
  const std::set<std::string> inside_lua = lua_called_commands(config.lua_dir);
  distlock::Client client(config.uri());
  distlock::Client stats(config.uri());
  const std::string lib = fenced ? "distlock-fenced" : "distlock";
  for (const int t : threads) {
    std::cerr << "distlock-bench: uncontended " << lib << " " << t << " threads\n";
    Latency ping;
    if (t == 1) ping = ping_latency(client, config.seconds / 2);
    const std::string prefix =
        "bench:u:" + std::to_string(getpid()) + ":" + lib + ":" + std::to_string(t) + ":";
    const auto before = command_calls(stats);
    const ServerCpu server0 = server_cpu(stats, config.server_pid);
    const double cpu0 = cpu_seconds();
    const std::int64_t switches0 = context_switches();
    const std::int64_t voluntary0 = voluntary_context_switches();
    const std::int64_t start = now_ns();
    auto results = pairs(client, t, fenced, config.seconds, prefix);
    const double elapsed = static_cast<double>(now_ns() - start) / 1e9;
    const double cpu = cpu_seconds() - cpu0;
    const auto switches = static_cast<double>(context_switches() - switches0);
    const auto voluntary = static_cast<double>(voluntary_context_switches() - voluntary0);
    const ServerCpu server1 = server_cpu(stats, config.server_pid);
    const double server_cpu = server1.total - server0.total;
    const auto calls = delta(before, command_calls(stats));
    std::vector<std::int64_t> acquire;
    std::vector<std::int64_t> release;
    bool failed = false;
    for (auto& r : results) {
      acquire.insert(acquire.end(), r.acquire_ns.begin(), r.acquire_ns.end());
      release.insert(release.end(), r.release_ns.begin(), r.release_ns.end());
      failed = failed || r.failed;
    }
    const auto n = static_cast<double>(acquire.size());
    const auto count = [&](const char* name) {
      const auto it = calls.find(name);
      return it == calls.end() ? 0.0 : static_cast<double>(it->second);
    };
    JsonLine line;
    line.add("scenario", "uncontended")
        .add("lib", lib)
        .add("threads", t)
        .add("pairs", static_cast<std::int64_t>(acquire.size()))
        .add("seconds", elapsed)
        .add("pairs_per_s", n / elapsed)
        .add("round_trips_per_pair", static_cast<double>(client_commands(calls, inside_lua)) / n)
        .add("evalsha_per_pair", count("evalsha") / n)
        .add("eval_per_pair", count("eval") / n)
        .add_raw("client_commands", commands_json(calls, inside_lua))
        .add("client_cpu_pct", 100 * cpu / elapsed)
        .add("server_cpu_pct", 100 * server_cpu / elapsed)
        .add("client_cpu_us_per_pair", 1e6 * cpu / n)
        .add("server_cpu_us_per_pair", 1e6 * server_cpu / n)
        .add("context_switches_per_pair", switches / n)
        .add("voluntary_context_switches_per_pair", voluntary / n)
        .add("failed", failed);
    add_server_ceiling(line, server0, server1, n, elapsed);
    add_latency(line, "acquire", summarize(acquire));
    add_latency(line, "release", summarize(release));
    if (t == 1) {
      add_latency(line, "ping", ping);
      line.add("acquire_p50_over_ping_p50", summarize(acquire).p50_us / ping.p50_us);
    }
    emit(line);
    // Leave nothing behind: every name was unlocked; the keys are gone.
  }
}

void run_watchdog(const Config& config, int leases, int watchdog_ms) {
  distlock::ClientOptions options = distlock::ClientOptions::from_uri(config.uri());
  options.watchdog_timeout = std::chrono::milliseconds(watchdog_ms);
  distlock::Client client(options);
  distlock::Client stats(config.uri());
  const std::string prefix = "bench:w:" + std::to_string(getpid()) + ":";

  // Acquire from several threads: 10,000 sequential round trips would take a
  // while on one.
  std::cerr << "distlock-bench: watchdog: acquiring " << leases << " leases\n";
  constexpr int kAcquirers = 16;
  std::vector<std::vector<distlock::Lease>> held(kAcquirers);
  {
    std::vector<std::thread> pool;
    for (int a = 0; a < kAcquirers; ++a) {
      pool.emplace_back([&, a] {
        for (int i = a; i < leases; i += kAcquirers) {
          held[static_cast<std::size_t>(a)].push_back(
              client.lock(prefix + std::to_string(i)).acquire());
        }
      });
    }
    for (auto& th : pool) th.join();
  }
  // Steady state: the first renewal round also loads the renew script
  // (NOSCRIPT, then EVAL), a once-per-server cost kept out of the window.
  const auto warmup = std::chrono::milliseconds(watchdog_ms / 3 + 300);
  std::this_thread::sleep_for(warmup);
  std::cerr << "distlock-bench: watchdog: holding for " << config.seconds << " s\n";
  const auto before = command_calls(stats);
  const double cpu0 = cpu_seconds();
  const std::int64_t t0 = now_ns();
  std::this_thread::sleep_for(std::chrono::duration<double>(config.seconds));
  const double wall = static_cast<double>(now_ns() - t0) / 1e9;
  const double cpu = cpu_seconds() - cpu0;
  const auto calls = delta(before, command_calls(stats));
  std::int64_t valid = 0;
  for (const auto& v : held) {
    for (const auto& l : v) valid += l.valid() ? 1 : 0;
  }
  const auto count = [&](const char* name) {
    const auto it = calls.find(name);
    return it == calls.end() ? 0.0 : static_cast<double>(it->second);
  };
  const double script_calls = count("evalsha") + count("eval");
  // renew.lua calls PEXPIRE once per lease it renews.
  const double renewals = count("pexpire");
  const double ttl_left = static_cast<double>(stats.command("PTTL", prefix + "0").as_integer());
  for (auto& v : held) v.clear();  // releases every lease
  JsonLine line;
  line.add("scenario", "watchdog")
      .add("lib", "distlock")
      .add("leases", leases)
      .add("watchdog_timeout_ms", watchdog_ms)
      .add("warmup_ms", static_cast<std::int64_t>(warmup.count()))
      .add("seconds", wall)
      .add("script_calls", script_calls)
      .add("script_calls_per_s", script_calls / wall)
      .add("renewals", renewals)
      .add("renewals_expected", leases * wall / (watchdog_ms / 3000.0))
      .add("leases_per_call", script_calls > 0 ? renewals / script_calls : 0.0)
      .add("client_cpu_s", cpu)
      .add("client_cpu_pct", 100.0 * cpu / wall)
      .add("leases_valid_at_end", valid)
      .add("first_key_pttl_ms", ttl_left)
      .add_raw("client_commands", commands_json(calls, lua_called_commands(config.lua_dir)));
  emit(line);
}

}  // namespace distlock_bench

namespace db = distlock_bench;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr
        << "usage: distlock-bench ping|uncontended|contended|watchdog|async|semaphore|rate_limiter|"
           "watchdog_permits --port P [...]\n";
    return 2;
  }
  try {
    const std::string scenario = argv[1];
    const db::Args args(argc, argv, 2);
    db::Config config;
    config.host = args.str("host", "127.0.0.1");
    config.port = static_cast<int>(args.num("port", 0));
    config.lua_dir = args.str("lua-dir", DISTLOCK_BENCH_LUA_DIR);
    config.server_pid = static_cast<int>(args.num("server-pid", 0));
    if (config.port <= 0) throw std::invalid_argument("--port is required");
    if (scenario == "ping") {
      config.seconds = args.real("seconds", 3);
      db::run_ping(config);
    } else if (scenario == "uncontended") {
      config.seconds = args.real("seconds", 5);
      db::run_uncontended(config, args.ints("threads", {1, 16, 64}), args.has("fenced"));
    } else if (scenario == "contended") {
      config.seconds = args.real("seconds", 10);
      db::run_contended(config, "/proc/self/exe", static_cast<int>(args.num("procs", 2)),
                        static_cast<int>(args.num("threads", 8)), args.str("records", ""),
                        args.has("fair"));
    } else if (scenario == "contended-child") {
      config.seconds = args.real("seconds", 10);
      return db::run_contended_child(config, args);
    } else if (scenario == "watchdog") {
      config.seconds = args.real("seconds", 15);
      db::run_watchdog(config, static_cast<int>(args.num("leases", 10000)),
                       static_cast<int>(args.num("watchdog-ms", 3000)));
    } else if (scenario == "semaphore") {
      config.seconds = args.real("seconds", 5);
      db::run_semaphore(config, static_cast<int>(args.num("threads", 64)),
                        static_cast<int>(args.num("permits", 8)), args.has("permit-handles"));
    } else if (scenario == "rate_limiter") {
      config.seconds = args.real("seconds", 5);
      db::run_rate_limiter(config, static_cast<int>(args.num("threads", 64)),
                           static_cast<int>(args.num("rate", 1000)),
                           static_cast<int>(args.num("interval-ms", 1000)));
    } else if (scenario == "watchdog_permits") {
      config.seconds = args.real("seconds", 15);
      db::run_watchdog_permits(config, static_cast<int>(args.num("holdings", 10000)),
                               static_cast<int>(args.num("watchdog-ms", 3000)));
    } else if (scenario == "async") {
      config.seconds = args.real("seconds", 5);
      db::run_async(config, static_cast<int>(args.num("coroutines", 256)),
                    args.str("executor", "app-thread"));
    } else {
      throw std::invalid_argument("unknown scenario: " + scenario);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "distlock-bench: " << e.what() << "\n";
    return 1;
  }
}
