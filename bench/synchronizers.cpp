// The synchronizer scenarios of distlock-bench: a Semaphore under
// 64 threads, a RateLimiter under 64 threads with its admission checked
// against what its rate allows, and the watchdog renewing 10,000 Permits.
// bench/peers/node_bench.js runs the same shapes for the node peers.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "command_stats.hpp"
#include "distlock/client.hpp"
#include "distlock/rate_limiter.hpp"
#include "distlock/semaphore.hpp"
#include "json_line.hpp"
#include "latency.hpp"
#include "process_stats.hpp"
#include "scenarios.hpp"
#include "server_cpu.hpp"

namespace distlock_bench {
namespace {

// The server's TIME in microseconds.
std::int64_t server_time_us(distlock::Client& client) {
  const distlock::Value t = client.command("TIME");
  const auto& a = t.as_array();
  return std::stoll(a.at(0).as_string()) * 1'000'000 + std::stoll(a.at(1).as_string());
}

double count_of(const std::map<std::string, std::uint64_t>& calls, const char* name) {
  const auto it = calls.find(name);
  return it == calls.end() ? 0.0 : static_cast<double>(it->second);
}

std::string client_commands_json(const std::map<std::string, std::uint64_t>& calls,
                                 const std::set<std::string>& inside_lua) {
  JsonLine j;
  for (const auto& [name, n] : calls) {
    if (name != "info" && name != "time" && inside_lua.count(name) == 0) j.add(name, n);
  }
  return j.str();
}

// Runs `threads` threads doing `body(thread)` until the deadline, in rounds
// bounded in count too; body returns false to stop its thread. Returns the
// wall seconds from the start signal to the last join.
template <class Body>
double run_threads(int threads, double seconds, Body body) {
  std::atomic<bool> go{false};
  std::int64_t deadline = 0;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      for (int i = 0; i < 20'000'000 && now_ns() < deadline; ++i) {
        if (!body(t)) break;
      }
    });
  }
  const std::int64_t start = now_ns();
  deadline = start + static_cast<std::int64_t>(seconds * 1e9);
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return static_cast<double>(now_ns() - start) / 1e9;
}

std::vector<std::int64_t> merged(std::vector<std::vector<std::int64_t>>& per_thread) {
  std::vector<std::int64_t> out;
  for (auto& v : per_thread) out.insert(out.end(), v.begin(), v.end());
  return out;
}

}  // namespace

void run_semaphore(const Config& config, int threads, int permits, bool permit_handles) {
  const std::set<std::string> inside_lua = lua_called_commands(config.lua_dir);
  distlock::Client client(config.uri());
  distlock::Client stats(config.uri());
  const std::string name = "bench:s:" + std::to_string(getpid()) + ":" + std::to_string(permits);
  distlock::Semaphore sem = client.semaphore(name);
  if (!sem.try_set_permits(permits)) throw std::runtime_error("semaphore " + name + " existed");
  std::cerr << "distlock-bench: semaphore" << (permit_handles ? " (Permit handles), " : ", ")
            << threads << " threads, " << permits << " permits\n";
  std::vector<std::vector<std::int64_t>> acquire(static_cast<std::size_t>(threads));
  std::vector<std::vector<std::int64_t>> release(static_cast<std::size_t>(threads));
  std::atomic<bool> failed{false};
  const auto before = command_calls(stats);
  const ServerCpu server0 = server_cpu(stats, config.server_pid);
  const double cpu0 = cpu_seconds();
  const std::int64_t voluntary0 = voluntary_context_switches();
  const double elapsed = run_threads(threads, config.seconds, [&](int t) {
    try {
      const std::int64_t t0 = now_ns();
      std::int64_t t1 = 0;
      if (permit_handles) {
        distlock::Permit permit = sem.acquire_permit(1);
        t1 = now_ns();
        permit.release();
      } else {
        sem.acquire(1);
        t1 = now_ns();
        sem.release(1);
      }
      const std::int64_t t2 = now_ns();
      acquire[static_cast<std::size_t>(t)].push_back(t1 - t0);
      release[static_cast<std::size_t>(t)].push_back(t2 - t1);
      return true;
    } catch (const std::exception& e) {
      std::cerr << "distlock-bench: semaphore thread " << t << ": " << e.what() << "\n";
      failed = true;
      return false;
    }
  });
  const double cpu = cpu_seconds() - cpu0;
  const auto voluntary = static_cast<double>(voluntary_context_switches() - voluntary0);
  const ServerCpu server1 = server_cpu(stats, config.server_pid);
  const auto calls = delta(before, command_calls(stats));
  std::vector<std::int64_t> acq = merged(acquire);
  std::vector<std::int64_t> rel = merged(release);
  const auto n = static_cast<double>(acq.size());
  const std::int64_t at_end = sem.available_permits();
  JsonLine line;
  line.add("scenario", "semaphore")
      .add("lib", permit_handles ? "distlock-permit" : "distlock")
      .add("threads", threads)
      .add("permits", permits)
      .add("pairs", static_cast<std::int64_t>(acq.size()))
      .add("seconds", elapsed)
      .add("pairs_per_s", n / elapsed)
      .add("round_trips_per_pair", static_cast<double>(client_commands(calls, inside_lua)) / n)
      .add("evalsha_per_pair", (count_of(calls, "evalsha") + count_of(calls, "eval")) / n)
      .add_raw("client_commands", client_commands_json(calls, inside_lua))
      .add("client_cpu_us_per_pair", 1e6 * cpu / n)
      .add("client_cpu_pct", 100 * cpu / elapsed)
      .add("voluntary_context_switches_per_pair", voluntary / n)
      .add("permits_available_at_end", at_end)
      .add("failed", failed.load());
  add_server_ceiling(line, server0, server1, n, elapsed);
  add_latency(line, "acquire", summarize(acq));
  add_latency(line, "release", summarize(rel));
  emit(line);
  stats.command("DEL", name, "distlock_sem_holders:{" + name + "}",
                "distlock_sem_counts:{" + name + "}");
}

void run_rate_limiter(const Config& config, int threads, int rate, int interval_ms) {
  const std::set<std::string> inside_lua = lua_called_commands(config.lua_dir);
  distlock::Client client(config.uri());
  distlock::Client stats(config.uri());
  const std::string name = "bench:rl:" + std::to_string(getpid());
  distlock::RateLimiter limiter = client.rate_limiter(name);
  if (!limiter.try_set_rate(rate, std::chrono::milliseconds(interval_ms))) {
    throw std::runtime_error("rate limiter " + name + " existed");
  }
  std::cerr << "distlock-bench: rate limiter, " << threads << " threads, " << rate << " per "
            << interval_ms << " ms\n";
  std::vector<std::vector<std::int64_t>> latency(static_cast<std::size_t>(threads));
  std::atomic<std::int64_t> admitted{0};
  std::atomic<bool> failed{false};
  const auto before = command_calls(stats);
  const ServerCpu server0 = server_cpu(stats, config.server_pid);
  const double cpu0 = cpu_seconds();
  // Every decision falls between these two readings of the server's clock,
  // the clock the limiter decides on: the rate allows at most
  // burst + rate * span / interval permits in between.
  const std::int64_t server_t0 = server_time_us(stats);
  const double elapsed = run_threads(threads, config.seconds, [&](int t) {
    try {
      const std::int64_t t0 = now_ns();
      const bool ok = limiter.try_acquire(1);
      latency[static_cast<std::size_t>(t)].push_back(now_ns() - t0);
      if (ok) admitted.fetch_add(1, std::memory_order_relaxed);
      return true;
    } catch (const std::exception& e) {
      std::cerr << "distlock-bench: rate limiter thread " << t << ": " << e.what() << "\n";
      failed = true;
      return false;
    }
  });
  const std::int64_t server_t1 = server_time_us(stats);
  const double cpu = cpu_seconds() - cpu0;
  const ServerCpu server1 = server_cpu(stats, config.server_pid);
  const auto calls = delta(before, command_calls(stats));
  std::vector<std::int64_t> all = merged(latency);
  const auto n = static_cast<double>(all.size());
  const std::int64_t span_us = server_t1 - server_t0;
  // GCRA with burst = the rate: a fresh limiter holds `rate` permits and
  // gains one every interval / rate.
  const std::int64_t allowed =
      rate + static_cast<std::int64_t>(static_cast<double>(rate) * static_cast<double>(span_us) /
                                       (1000.0 * interval_ms));
  JsonLine line;
  line.add("scenario", "rate_limiter")
      .add("lib", "distlock")
      .add("threads", threads)
      .add("rate", rate)
      .add("interval_ms", interval_ms)
      .add("burst", rate)
      .add("decisions", static_cast<std::int64_t>(all.size()))
      .add("seconds", elapsed)
      .add("decisions_per_s", n / elapsed)
      .add("server_span_s", static_cast<double>(span_us) / 1e6)
      .add("admitted", admitted.load())
      .add("allowed", allowed)
      .add("admitted_over_allowed", static_cast<double>(admitted.load()) / allowed)
      .add("over_admitted", std::max<std::int64_t>(0, admitted.load() - allowed))
      .add("round_trips_per_decision", static_cast<double>(client_commands(calls, inside_lua)) / n)
      .add_raw("client_commands", client_commands_json(calls, inside_lua))
      .add("client_cpu_us_per_decision", 1e6 * cpu / n)
      .add("client_cpu_pct", 100 * cpu / elapsed)
      .add("failed", failed.load());
  add_server_ceiling(line, server0, server1, n, elapsed);
  add_latency(line, "decision", summarize(all));
  emit(line);
  stats.command("DEL", name);
}

void run_watchdog_permits(const Config& config, int holdings, int watchdog_ms) {
  distlock::ClientOptions options = distlock::ClientOptions::from_uri(config.uri());
  options.watchdog_timeout = std::chrono::milliseconds(watchdog_ms);
  distlock::Client client(options);
  distlock::Client stats(config.uri());
  const std::string name = "bench:wp:" + std::to_string(getpid());
  distlock::Semaphore sem = client.semaphore(name);
  if (!sem.try_set_permits(holdings)) throw std::runtime_error("semaphore " + name + " existed");
  std::cerr << "distlock-bench: watchdog_permits: acquiring " << holdings << " Permits\n";
  // One Permit per holding, each with its own holder id and no fixed lease:
  // the watchdog renews them all. Acquired from several threads.
  constexpr int kAcquirers = 16;
  std::vector<std::vector<distlock::Permit>> held(kAcquirers);
  {
    std::vector<std::thread> pool;
    for (int a = 0; a < kAcquirers; ++a) {
      pool.emplace_back([&, a] {
        for (int i = a; i < holdings; i += kAcquirers) {
          held[static_cast<std::size_t>(a)].push_back(sem.acquire_permit(1));
        }
      });
    }
    for (auto& th : pool) th.join();
  }
  // As in run_watchdog: the first renewal round (and its script load) stays
  // out of the window.
  const auto period = std::chrono::milliseconds(watchdog_ms / 3);
  const auto warmup = period + std::chrono::milliseconds(300);
  std::this_thread::sleep_for(warmup);
  std::cerr << "distlock-bench: watchdog_permits: holding for " << config.seconds << " s\n";
  const auto before = command_calls(stats);
  const double cpu0 = cpu_seconds();
  const std::int64_t t0 = now_ns();
  std::this_thread::sleep_for(std::chrono::duration<double>(config.seconds));
  const double wall = static_cast<double>(now_ns() - t0) / 1e9;
  const double cpu = cpu_seconds() - cpu0;
  const auto calls = delta(before, command_calls(stats));
  std::int64_t valid = 0;
  for (const auto& v : held) {
    for (const auto& p : v) valid += p.valid() ? 1 : 0;
  }
  const std::int64_t available_held = sem.available_permits();
  {
    std::vector<std::thread> pool;  // releases every Permit
    for (auto& v : held) pool.emplace_back([&v] { v.clear(); });
    for (auto& th : pool) th.join();
  }
  const std::int64_t available_after = sem.available_permits();
  const double script_calls = count_of(calls, "evalsha") + count_of(calls, "eval");
  // renew.lua's kind 'p' moves one zset score (ZADD) per holding it renews;
  // nothing else runs ZADD while the permits are only held.
  const double renewals = count_of(calls, "zadd");
  const double periods = wall * 1000.0 / static_cast<double>(period.count());
  JsonLine line;
  line.add("scenario", "watchdog_permits")
      .add("lib", "distlock")
      .add("holdings", holdings)
      .add("watchdog_timeout_ms", watchdog_ms)
      .add("period_ms", static_cast<std::int64_t>(period.count()))
      .add("warmup_ms", static_cast<std::int64_t>(warmup.count()))
      .add("seconds", wall)
      .add("periods", periods)
      .add("script_calls", script_calls)
      .add("script_calls_per_period", script_calls / periods)
      .add("renewals", renewals)
      .add("renewals_expected", holdings * periods)
      .add("holdings_per_call", script_calls > 0 ? renewals / script_calls : 0.0)
      .add("client_cpu_s", cpu)
      .add("client_cpu_pct", 100.0 * cpu / wall)
      .add("holdings_valid_at_end", valid)
      .add("permits_available_while_held", available_held)
      .add("permits_available_after_release", available_after)
      .add_raw("client_commands", client_commands_json(calls, lua_called_commands(config.lua_dir)));
  emit(line);
  stats.command("DEL", name, "distlock_sem_holders:{" + name + "}",
                "distlock_sem_counts:{" + name + "}");
}

}  // namespace distlock_bench
