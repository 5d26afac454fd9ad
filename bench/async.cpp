// The async scenario: one application thread runs `coroutines` coroutines,
// each looping co_await async_acquire + co_await async_release on its own
// lock name until the deadline. No thread blocks on a reply.
//
// Two places to run the coroutines:
// - "app-thread": an asio::io_context run by this program's main thread; every
//   completion hops from the Client's I/O thread to it.
// - "client-io-thread": the Client's own I/O executor, so completions run
//   where the replies are read (distlock::get_executor(client)).
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/use_future.hpp>
#include <atomic>
#include <distlock/client.hpp>
#include <distlock/lock.hpp>
#include <distlock/lock_async.hpp>
#include <exception>
#include <future>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_stats.hpp"
#include "json_line.hpp"
#include "latency.hpp"
#include "process_stats.hpp"
#include "scenarios.hpp"
#include "server_cpu.hpp"

namespace distlock_bench {
namespace {

struct Samples {
  std::vector<std::int64_t> acquire_ns;
  std::vector<std::int64_t> release_ns;
};

asio::awaitable<void> pair_loop(distlock::Lock lock,
                                std::int64_t deadline,
                                Samples& samples,
                                std::atomic<int>& failures) {
  try {
    for (int i = 0; i < 20'000'000; ++i) {
      const std::int64_t t0 = now_ns();
      if (t0 >= deadline) break;
      distlock::Lease lease = co_await lock.async_acquire(asio::use_awaitable);
      const std::int64_t t1 = now_ns();
      co_await lease.async_release(asio::use_awaitable);
      const std::int64_t t2 = now_ns();
      samples.acquire_ns.push_back(t1 - t0);
      samples.release_ns.push_back(t2 - t1);
    }
  } catch (const std::exception& e) {
    if (failures.fetch_add(1) == 0) std::cerr << "distlock-bench: async: " << e.what() << "\n";
  }
}

}  // namespace

void run_async(const Config& config, int coroutines, const std::string& executor) {
  if (executor != "app-thread" && executor != "client-io-thread") {
    throw std::invalid_argument("--executor must be app-thread or client-io-thread");
  }
  const std::set<std::string> inside_lua = lua_called_commands(config.lua_dir);
  distlock::Client client(config.uri());
  distlock::Client stats(config.uri());
  const std::string prefix = "bench:a:" + std::to_string(getpid()) + ":" + executor + ":";
  std::vector<distlock::Lock> locks;
  for (int c = 0; c < coroutines; ++c) locks.push_back(client.lock(prefix + std::to_string(c)));
  // One pair per name first, outside the window: the first round trips of a
  // fresh Client are not the steady state.
  for (auto& lock : locks) lock.acquire().release();

  std::cerr << "distlock-bench: async " << coroutines << " coroutines on " << executor << "\n";
  std::vector<Samples> samples(static_cast<std::size_t>(coroutines));
  for (auto& s : samples) {
    s.acquire_ns.reserve(1 << 14);
    s.release_ns.reserve(1 << 14);
  }
  std::atomic<int> failures{0};
  std::int64_t deadline = 0;
  asio::io_context io(1);

  const auto calls0 = command_calls(stats);
  const ServerCpu server0 = server_cpu(stats, config.server_pid);
  const double cpu0 = cpu_seconds();
  const std::int64_t switches0 = context_switches();
  const std::int64_t voluntary0 = voluntary_context_switches();
  const std::int64_t start = now_ns();
  deadline = start + static_cast<std::int64_t>(config.seconds * 1e9);
  if (executor == "app-thread") {
    for (int c = 0; c < coroutines; ++c) {
      const auto i = static_cast<std::size_t>(c);
      asio::co_spawn(io, pair_loop(locks[i], deadline, samples[i], failures), asio::detached);
    }
    io.run();  // returns when every coroutine has finished
  } else {
    const asio::any_io_executor ex = distlock::get_executor(client);
    std::vector<std::future<void>> done;
    for (int c = 0; c < coroutines; ++c) {
      const auto i = static_cast<std::size_t>(c);
      done.push_back(asio::co_spawn(ex, pair_loop(locks[i], deadline, samples[i], failures),
                                    asio::use_future));
    }
    for (auto& f : done) f.get();
  }
  const double elapsed = static_cast<double>(now_ns() - start) / 1e9;
  const double cpu = cpu_seconds() - cpu0;
  const auto switches = static_cast<double>(context_switches() - switches0);
  const auto voluntary = static_cast<double>(voluntary_context_switches() - voluntary0);
  const ServerCpu server1 = server_cpu(stats, config.server_pid);
  const auto calls = delta(calls0, command_calls(stats));

  std::vector<std::int64_t> acquire;
  std::vector<std::int64_t> release;
  for (auto& s : samples) {
    acquire.insert(acquire.end(), s.acquire_ns.begin(), s.acquire_ns.end());
    release.insert(release.end(), s.release_ns.begin(), s.release_ns.end());
  }
  const auto n = static_cast<double>(acquire.size());
  JsonLine line;
  line.add("scenario", "async")
      .add("lib", "distlock")
      .add("executor", executor)
      .add("app_threads", executor == "app-thread" ? 1 : 0)
      .add("coroutines", coroutines)
      .add("pairs", static_cast<std::int64_t>(acquire.size()))
      .add("seconds", elapsed)
      .add("pairs_per_s", n / elapsed)
      .add("round_trips_per_pair", static_cast<double>(client_commands(calls, inside_lua)) / n)
      .add("client_cpu_pct", 100 * cpu / elapsed)
      .add("server_cpu_pct", 100 * (server1.total - server0.total) / elapsed)
      .add("client_cpu_us_per_pair", 1e6 * cpu / n)
      .add("server_cpu_us_per_pair", 1e6 * (server1.total - server0.total) / n)
      .add("context_switches_per_pair", switches / n)
      .add("voluntary_context_switches_per_pair", voluntary / n)
      .add("failed", failures.load() != 0);
  add_server_ceiling(line, server0, server1, n, elapsed);
  add_latency(line, "acquire", summarize(acquire));
  add_latency(line, "release", summarize(release));
  emit(line);
}

}  // namespace distlock_bench
