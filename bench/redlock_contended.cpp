// The contended Redlock scenario: P processes x T threads (or node async
// workers) on ONE lock name over the same masters.
//
// How the handoff is measured. Every acquisition is stamped, in the process
// that made it, with CLOCK_MONOTONIC (steady_clock; process.hrtime in node):
// one clock for every process of a machine, so the stamps of all processes
// are comparable without any message between them. Each record holds when
// the acquire was called, when it returned, when the release was called and
// when it returned. After the run the records of all processes are merged
// and sorted by acquire return; under mutual exclusion that order is the
// order of the holders, and the successor of a holding is the next record.
//   handoff              = next holder's acquire return - release CALL
//                          (the definition of distlock-bench's contended
//                          scenario and docs/performance.md: how long the
//                          lock stood free, the release's own fan-out
//                          included)
//   handoff_after_return = next holder's acquire return - release RETURN
//                          (may be negative: a waiter can win once the
//                          delete reached a majority, before the releaser has
//                          heard every node)
// Both are counted only when another caller was already waiting as the
// release was called (an uncontended gap is not a handoff). With a polling
// waiter the releasing thread itself mostly wins again at once (barging), so
//   handoff_to_other     = handoff, counted only when the next holder is
//                          another thread: how long a waiter takes to get a
//                          freed lock (by its retry delay, or by a wake-up). No shared
// memory or Redis key is written to time it, so the measurement adds no
// round trip to the critical path. A next holder that returned before the
// previous one called release is an overlap (mutual exclusion broken); the
// counter below checks the same from the data side.
//
// Think time (--think-ms): a thread may wait outside the lock between its
// release and its next acquire. Without it the releasing thread asks again
// at once and nearly always wins again, so the handoff figures mostly time
// the releaser's own re-acquire; with a think time longer than the handoff,
// the lock stands free until a waiter takes it, and the handoff is how the
// waiter learns the lock is free (its retry delay, or a wake-up).
//
// Critical section: GET then SET of a counter on the first master (a
// non-atomic read-modify-write the lock must protect); the counter must end
// equal to the number of acquisitions.
#include "redlock_contended.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <stdexcept>
#include <thread>

#include "distlock/client.hpp"
#include "distlock/redlock.hpp"
#include "json_line.hpp"
#include "latency.hpp"
#include "redlock_history.hpp"

extern char** environ;

namespace distlock_bench {
namespace {

pid_t spawn(const std::string& path, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(path.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start " + path);
  }
  return pid;
}

// Waits for every child until `limit_ns`; kills (by pid) those still running.
bool wait_children(std::vector<pid_t> pids, std::int64_t limit_ns) {
  bool ok = true;
  while (!pids.empty()) {
    for (auto it = pids.begin(); it != pids.end();) {
      int status = 0;
      if (waitpid(*it, &status, WNOHANG) == *it) {
        ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        it = pids.erase(it);
      } else {
        ++it;
      }
    }
    if (!pids.empty() && now_ns() > limit_ns) {
      for (const pid_t p : pids) kill(p, SIGKILL);
      for (const pid_t p : pids) waitpid(p, nullptr, 0);
      std::cerr << "redlock_bench: contended children did not finish; killed\n";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ok;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= s.size();) {
    const auto comma = std::min(s.find(',', at), s.size());
    out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

distlock::RedlockOptions group_options(std::int64_t delay_ms, std::int64_t jitter_ms) {
  distlock::RedlockOptions options;
  if (delay_ms >= 0) options.retry_delay = std::chrono::milliseconds(delay_ms);
  if (jitter_ms >= 0) options.retry_jitter = std::chrono::milliseconds(jitter_ms);
  return options;
}

std::int64_t counter_value(distlock::Client& client, const std::string& key) {
  const distlock::Value v = client.command("GET", key);
  return v.is_nil() ? 0 : std::stoll(v.as_string());
}

// The run's lock and counter names, and the counter reset on the first master.
struct RunKeys {
  std::string name;
  std::string counter;
};

RunKeys fresh_keys(distlock::Client& client,
                   const RedlockContendedConfig& config,
                   const std::string& lib) {
  RunKeys k;
  k.name = config.name.empty() ? "bench:rl:c:" + lib + ":" + std::to_string(getpid()) : config.name;
  k.counter = k.name + ":counter";
  client.command("SET", k.counter, 0);
  return k;
}

// Figures of the merged history plus the counter check, as one JSON line.
void report(JsonLine& line,
            std::vector<Record>& history,
            const RedlockContendedConfig& config,
            distlock::Client& client,
            const RunKeys& keys,
            bool children_ok) {
  const auto expected = static_cast<std::int64_t>(history.size());
  history_figures(history, config.processes * config.threads, line);
  const std::int64_t final_count = counter_value(client, keys.counter);
  client.command("DEL", keys.counter);
  line.add("counter_expected", expected)
      .add("counter_final", final_count)
      .add("counter_exact", final_count == expected)
      .add("children_ok", children_ok);
  emit(line);
}

// The command line of contended child `proc` (run_redlock_contended_child).
std::vector<std::string> child_args(const RedlockContendedConfig& config,
                                    const RunKeys& keys,
                                    const distlock::RedlockOptions& options,
                                    int proc,
                                    std::int64_t start_at,
                                    const std::string& out) {
  std::vector<std::string> a{"--contended-child"};
  const auto add = [&a](const char* flag, std::string value) {
    a.emplace_back(flag);
    a.push_back(std::move(value));
  };
  add("--uris", joined(config.uris));
  add("--name", keys.name);
  add("--counter", keys.counter);
  add("--threads", std::to_string(config.threads));
  add("--proc", std::to_string(proc));
  add("--start-at", std::to_string(start_at));
  add("--seconds", std::to_string(config.seconds));
  add("--out", out);
  add("--retry-delay-ms", std::to_string(options.retry_delay.count()));
  add("--retry-jitter-ms", std::to_string(options.retry_jitter.count()));
  add("--think-ms", std::to_string(config.think_ms));
  return a;
}

std::string self_path(const std::string& fallback) {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n <= 0 ? fallback : std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

void run_redlock_contended(const RedlockContendedConfig& config, const std::string& self) {
  distlock::Client client(config.uris.front());
  const RunKeys keys = fresh_keys(client, config, "distlock");
  const auto options = group_options(config.retry_delay_ms, config.retry_jitter_ms);
  // Children connect first, then all start at the same instant.
  const std::int64_t start_at = now_ns() + 1'500'000'000;
  std::vector<pid_t> pids;
  std::vector<std::string> files;
  for (int p = 0; p < config.processes; ++p) {
    files.push_back("/tmp/redlock-bench-" + std::to_string(getpid()) + "-" + std::to_string(p) +
                    ".rec");
    const auto args = child_args(config, keys, options, p, start_at, files.back());
    pids.push_back(spawn(self_path(self), args));
  }
  const bool ok =
      wait_children(pids, start_at + static_cast<std::int64_t>((config.seconds + 60) * 1e9));
  std::vector<Record> history;
  for (const auto& f : files) {
    const auto part = read_records(f);
    history.insert(history.end(), part.begin(), part.end());
    std::remove(f.c_str());
  }
  JsonLine line;
  line.add("scenario", "contended")
      .add("lib", "distlock")
      .add("procs", config.processes)
      .add("threads_per_proc", config.threads)
      .add("seconds", config.seconds)
      .add("think_ms", config.think_ms)
      .add("retry", "delay + U[0, jitter]")
      .add("retry_delay_ms", static_cast<std::int64_t>(options.retry_delay.count()))
      .add("retry_jitter_ms", static_cast<std::int64_t>(options.retry_jitter.count()));
  report(line, history, config, client, keys, ok);
}

void run_node_redlock_contended(const RedlockContendedConfig& config,
                                const std::string& node_retry) {
  distlock::Client client(config.uris.front());
  const RunKeys keys = fresh_keys(client, config, "node");
  // redlock v4 waits retryDelay + floor(U(-1, 1) * retryJitter) between
  // attempts; distlock waits retry_delay + U[0, retry_jitter]. "matched"
  // gives node the same interval distribution: [delay, delay + jitter].
  std::int64_t delay = 200, jitter = 100;  // redlock v4's defaults
  if (node_retry == "matched") {
    const auto o = group_options(config.retry_delay_ms, config.retry_jitter_ms);
    jitter = o.retry_jitter.count() / 2;
    delay = o.retry_delay.count() + jitter;
  } else if (node_retry != "default") {
    const auto parts = split(node_retry);
    if (parts.size() != 2) throw std::invalid_argument("--node-retry: matched, default or D,J");
    delay = std::stoll(parts[0]);
    jitter = std::stoll(parts[1]);
  }
  const std::string records = "/tmp/redlock-bench-node-" + std::to_string(getpid()) + ".rec";
  const std::string cmd =
      "node " DISTLOCK_BENCH_PEERS "/node_redlock5.js contended --ports " + joined(config.ports) +
      " --procs " + std::to_string(config.processes) + " --workers " +
      std::to_string(config.threads) + " --seconds " + std::to_string(config.seconds) +
      " --name '" + keys.name + "' --counter '" + keys.counter + "' --retry-delay " +
      std::to_string(delay) + " --retry-jitter " + std::to_string(jitter) + " --think-ms " +
      std::to_string(config.think_ms) + " --records " + records;
  const bool ok = std::system(cmd.c_str()) == 0;
  auto history = read_records(records);
  std::remove(records.c_str());
  JsonLine line;
  line.add("scenario", "contended")
      .add("lib", "node-redlock")
      .add("procs", config.processes)
      .add("threads_per_proc", config.threads)
      .add("seconds", config.seconds)
      .add("think_ms", config.think_ms)
      .add("retry", "delay + floor(U(-1, 1) * jitter), retryCount -1")
      .add("node_retry", node_retry)
      .add("retry_delay_ms", delay)
      .add("retry_jitter_ms", jitter);
  report(line, history, config, client, keys, ok);
}

int run_redlock_contended_child(const Args& args) {
  const auto uris = split(args.str("uris", ""));
  const std::string name = args.str("name", "");
  const std::string counter = args.str("counter", "");
  const int threads = static_cast<int>(args.num("threads", 8));
  const int proc = static_cast<int>(args.num("proc", 0));
  const std::int64_t start_at = args.num("start-at", now_ns());
  const std::int64_t end_at = start_at + static_cast<std::int64_t>(args.real("seconds", 10) * 1e9);
  const auto think = std::chrono::milliseconds(args.num("think-ms", 0));
  // One group (and one counter connection) per process, shared by its
  // threads, as one node redlock instance per node process.
  distlock::RedlockGroup group(
      uris, group_options(args.num("retry-delay-ms", -1), args.num("retry-jitter-ms", -1)));
  distlock::Client client(uris.front());
  std::vector<std::vector<Record>> per_thread(static_cast<std::size_t>(threads));
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto lock = group.lock(name);
      while (now_ns() < start_at) std::this_thread::sleep_for(std::chrono::microseconds(200));
      try {
        while (now_ns() < end_at) {
          Record r{proc, t, now_ns(), 0, 0, 0};
          // Bounded: a wait this long is a failure, not a figure.
          auto lease = lock.try_acquire_for(std::chrono::seconds(30));
          if (!lease) {
            failures.fetch_add(1);
            continue;
          }
          r.acquire_ns = now_ns();
          client.command("SET", counter, counter_value(client, counter) + 1);
          r.release_call_ns = now_ns();
          lease->release();
          r.release_return_ns = now_ns();
          per_thread[static_cast<std::size_t>(t)].push_back(r);
          if (think.count() > 0) std::this_thread::sleep_for(think);
        }
      } catch (const std::exception& e) {
        std::cerr << "redlock_bench: child " << proc << "/" << t << ": " << e.what() << "\n";
        failures.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  write_records(args.str("out", "/dev/null"), per_thread);
  return failures.load() == 0 ? 0 : 3;
}

}  // namespace distlock_bench
