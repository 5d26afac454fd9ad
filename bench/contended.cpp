// The contended scenario: several processes x threads on ONE lock name.
//
// Every process stamps its acquisitions with CLOCK_MONOTONIC (steady_clock),
// which is one clock for all processes of a machine, so the parent can merge
// them into one history: who held the lock when, how long each waited, and
// how long the lock stood free between one holder's unlock and the next
// holder's lock() returning (the handoff).
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
#include <string>
#include <thread>
#include <vector>

#include "args.hpp"
#include "distlock/client.hpp"
#include "distlock/lock.hpp"
#include "json_line.hpp"
#include "latency.hpp"
#include "scenarios.hpp"

extern char** environ;

namespace distlock_bench {
namespace {

struct Record {
  int proc = 0;
  int thread = 0;
  std::int64_t call_ns = 0;     // lock() called
  std::int64_t acquire_ns = 0;  // lock() returned
  std::int64_t release_ns = 0;  // unlock() called
};

std::vector<Record> read_records(const std::string& path) {
  std::vector<Record> out;
  std::ifstream in(path);
  Record r;
  while (in >> r.proc >> r.thread >> r.call_ns >> r.acquire_ns >> r.release_ns) out.push_back(r);
  return out;
}

// Fills `line` with the figures of a merged history (see the comment at the
// top; bench/peers/contended_stats.py computes the same for the peers).
void history_figures(std::vector<Record>& h, int threads_total, JsonLine& line) {
  std::sort(h.begin(), h.end(),
            [](const Record& a, const Record& b) { return a.acquire_ns < b.acquire_ns; });
  std::vector<std::int64_t> handoff;
  std::vector<std::int64_t> wait;
  std::int64_t same_thread = 0;
  std::int64_t same_proc = 0;
  std::int64_t overlaps = 0;
  std::map<std::pair<int, int>, std::int64_t> per_thread;
  // earliest[i]: the earliest lock() call among acquisitions i, i+1, ...
  std::vector<std::int64_t> earliest(h.size() + 1, std::numeric_limits<std::int64_t>::max());
  for (std::size_t i = h.size(); i-- > 0;) earliest[i] = std::min(h[i].call_ns, earliest[i + 1]);
  for (std::size_t i = 0; i < h.size(); ++i) {
    wait.push_back(h[i].acquire_ns - h[i].call_ns);
    ++per_thread[{h[i].proc, h[i].thread}];
    if (i + 1 == h.size()) break;
    const Record& prev = h[i];
    const Record& next = h[i + 1];
    // The next holder returned from lock() before the previous one had even
    // started to unlock: two holders at once.
    if (next.acquire_ns < prev.release_ns) ++overlaps;
    // Contended: another thread was already waiting when this unlock began.
    // Then the handoff is how long the lock stood free, and the previous
    // holder winning it again is barging.
    if (earliest[i + 1] < prev.release_ns) {
      handoff.push_back(next.acquire_ns - prev.release_ns);
      if (next.proc == prev.proc && next.thread == prev.thread) ++same_thread;
      if (next.proc == prev.proc) ++same_proc;
    }
  }
  double sum = 0;
  double sum_sq = 0;
  for (const auto& [who, n] : per_thread) {
    sum += static_cast<double>(n);
    sum_sq += static_cast<double>(n) * static_cast<double>(n);
  }
  // Threads that never got the lock count as zeros.
  const double jain = sum_sq > 0 ? sum * sum / (threads_total * sum_sq) : 0;
  const double span =
      h.empty() ? 0 : static_cast<double>(h.back().release_ns - h.front().call_ns) / 1e9;
  const auto handoffs = static_cast<double>(handoff.size());
  line.add("acquisitions", static_cast<std::int64_t>(h.size()))
      .add("acquisitions_per_s", span > 0 ? static_cast<double>(h.size()) / span : 0.0)
      .add("handoffs", static_cast<std::int64_t>(handoff.size()))
      .add("barging_share", handoffs > 0 ? static_cast<double>(same_thread) / handoffs : 0.0)
      .add("same_process_share", handoffs > 0 ? static_cast<double>(same_proc) / handoffs : 0.0)
      .add("jain_fairness", jain)
      .add("threads_that_acquired", static_cast<std::int64_t>(per_thread.size()))
      .add("overlaps", overlaps);
  add_latency(line, "handoff", summarize(handoff));
  add_latency(line, "wait", summarize(wait));
}

std::string self_path(const std::string& fallback) {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return fallback;
  return std::string(buf, static_cast<std::size_t>(n));
}

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
bool wait_children(std::vector<pid_t>& pids, std::int64_t limit_ns) {
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
      std::cerr << "distlock-bench: contended: children did not finish; killed\n";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ok;
}

}  // namespace

void run_contended(const Config& config,
                   const std::string& self,
                   int procs,
                   int threads,
                   const std::string& records,
                   bool fair) {
  distlock::Client client(config.uri());
  const std::string name = "bench:c:" + std::to_string(getpid());
  const std::string counter = name + ":counter";
  client.command("DEL", name);
  client.command("SET", counter, 0);
  // Children connect first, then all start at the same instant.
  const std::int64_t start_at = now_ns() + 1'500'000'000;
  std::vector<pid_t> pids;
  std::vector<std::string> files;
  const std::string mode = fair ? "fair" : "lock";
  const std::string exe = self_path(self);
  for (int p = 0; p < procs; ++p) {
    files.push_back("/tmp/distlock-bench-" + std::to_string(getpid()) + "-" + std::to_string(p) +
                    ".rec");
    pids.push_back(spawn(exe, {"contended-child",
                               "--host",
                               config.host,
                               "--port",
                               std::to_string(config.port),
                               "--name",
                               name,
                               "--counter",
                               counter,
                               "--threads",
                               std::to_string(threads),
                               "--proc",
                               std::to_string(p),
                               "--start-at",
                               std::to_string(start_at),
                               "--seconds",
                               std::to_string(config.seconds),
                               "--out",
                               files.back(),
                               "--lock",
                               mode}));
  }
  const bool children_ok =
      wait_children(pids, start_at + static_cast<std::int64_t>((config.seconds + 60) * 1e9));
  std::vector<Record> history;
  for (const auto& f : files) {
    const auto part = read_records(f);
    history.insert(history.end(), part.begin(), part.end());
    std::remove(f.c_str());
  }
  if (!records.empty()) {
    std::ofstream out(records);
    for (const auto& r : history) {
      out << r.proc << ' ' << r.thread << ' ' << r.call_ns << ' ' << r.acquire_ns << ' '
          << r.release_ns << '\n';
    }
  }
  const distlock::Value v = client.command("GET", counter);
  const std::int64_t final_count = v.is_nil() ? 0 : std::stoll(v.as_string());
  client.command("DEL", counter);
  JsonLine line;
  line.add("scenario", "contended")
      .add("lib", fair ? "distlock-fair" : "distlock")
      .add("procs", procs)
      .add("threads_per_proc", threads)
      .add("seconds", config.seconds);
  const auto expected = static_cast<std::int64_t>(history.size());
  history_figures(history, procs * threads, line);
  line.add("counter_expected", expected)
      .add("counter_final", final_count)
      .add("counter_exact", final_count == expected)
      .add("children_ok", children_ok);
  emit(line);
}

int run_contended_child(const Config& config, const Args& args) {
  const std::string name = args.str("name", "");
  const std::string counter = args.str("counter", "");
  const int threads = static_cast<int>(args.num("threads", 8));
  const int proc = static_cast<int>(args.num("proc", 0));
  const std::int64_t start_at = args.num("start-at", now_ns());
  const std::int64_t end_at = start_at + static_cast<std::int64_t>(config.seconds * 1e9);
  distlock::Client client(config.uri());
  std::vector<std::vector<Record>> per_thread(static_cast<std::size_t>(threads));
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto& mine = per_thread[static_cast<std::size_t>(t)];
      distlock::Lock lock =
          args.str("lock", "lock") == "fair" ? client.fair_lock(name) : client.lock(name);
      while (now_ns() < start_at) std::this_thread::sleep_for(std::chrono::microseconds(200));
      try {
        for (int i = 0; i < 10'000'000 && now_ns() < end_at; ++i) {
          Record r{proc, t, now_ns(), 0, 0};
          // Bounded: a wait this long is a failure, not a figure.
          if (!lock.try_lock_for(std::chrono::seconds(30))) {
            failures.fetch_add(1);
            continue;
          }
          r.acquire_ns = now_ns();
          // The non-atomic read-modify-write the lock must protect.
          const distlock::Value v = client.command("GET", counter);
          const std::int64_t n = v.is_nil() ? 0 : std::stoll(v.as_string());
          client.command("SET", counter, n + 1);
          r.release_ns = now_ns();
          lock.unlock();
          mine.push_back(r);
        }
      } catch (const std::exception& e) {
        std::cerr << "distlock-bench: contended child " << proc << "/" << t << ": " << e.what()
                  << "\n";
        failures.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  std::ofstream out(args.str("out", "/dev/null"));
  for (const auto& v : per_thread) {
    for (const auto& r : v) {
      out << r.proc << ' ' << r.thread << ' ' << r.call_ns << ' ' << r.acquire_ns << ' '
          << r.release_ns << '\n';
    }
  }
  return failures.load() == 0 ? 0 : 3;
}

}  // namespace distlock_bench
