// The flash-sale demo: a stock of units, several processes x threads each
// buying one unit at a time (read the stock, check it is > 0, write stock-1,
// record the order). Run once without a lock, showing oversold units, and
// once under a distlock Lock, selling exactly the stock.
//
//   distlock-demo --uri redis://127.0.0.1:6379 [--processes 4] [--threads 8] [--stock 1000]
//
// The coordinator re-runs this binary as worker processes (--worker).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <distlock/distlock.hpp>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kStock = "flash-sale:stock";
constexpr const char* kOrders = "flash-sale:orders";
constexpr const char* kLock = "flash-sale:lock";

// One worker process: `threads` buyers until the stock is gone. Prints
// "orders N" and one "latency_us X" line per lock acquisition.
int run_worker(const std::string& uri, int threads, bool locked) {
  distlock::Client client(uri);
  distlock::Lock lock = client.lock(kLock);
  std::mutex mutex;
  std::vector<long> latencies;
  std::atomic<long> orders{0};
  auto buyer = [&](int id) {
    std::vector<long> mine;
    for (;;) {
      std::unique_lock<distlock::Lock> guard(lock, std::defer_lock);
      if (locked) {
        const auto start = Clock::now();
        guard.lock();
        mine.push_back(static_cast<long>(
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count()));
      }
      // The unsafe read-check-write that the lock protects.
      const long stock = std::stol(client.command("GET", kStock).as_string());
      if (stock <= 0) break;
      client.command("SET", kStock, stock - 1);
      client.command("RPUSH", kOrders,
                     "buyer-" + std::to_string(::getpid()) + "-" + std::to_string(id));
      ++orders;
    }
    std::lock_guard g(mutex);
    latencies.insert(latencies.end(), mine.begin(), mine.end());
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(buyer, i);
  for (auto& t : pool) t.join();
  std::printf("orders %ld\n", orders.load());
  for (long l : latencies) std::printf("latency_us %ld\n", l);
  return 0;
}

struct RoundResult {
  long sold = 0;
  long final_stock = 0;
  double seconds = 0;
  std::vector<long> latencies;
};

// Starts `processes` workers of this binary and collects their output.
RoundResult run_round(const std::string& self,
                      const std::string& uri,
                      int processes,
                      int threads,
                      long stock,
                      bool locked) {
  distlock::Client client(uri);
  client.command("DEL", kStock, kOrders, kLock);
  client.command("SET", kStock, stock);
  std::vector<std::pair<pid_t, FILE*>> workers;
  const auto start = Clock::now();
  for (int p = 0; p < processes; ++p) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<std::string> args = {self,
                                     "--worker",
                                     "--uri",
                                     uri,
                                     "--threads",
                                     std::to_string(threads),
                                     locked ? "--locked" : "--unlocked"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
      throw std::runtime_error("cannot start a worker process");
    }
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    workers.emplace_back(pid, ::fdopen(fds[0], "r"));
  }
  RoundResult r;
  for (auto& [pid, out] : workers) {
    char line[128];
    while (std::fgets(line, sizeof line, out) != nullptr) {
      long value = 0;
      if (std::sscanf(line, "latency_us %ld", &value) == 1) r.latencies.push_back(value);
    }
    std::fclose(out);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("a worker failed");
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.sold = client.command("LLEN", kOrders).as_integer();
  r.final_stock = std::stol(client.command("GET", kStock).as_string());
  client.command("DEL", kStock, kOrders, kLock);
  return r;
}

long percentile(std::vector<long> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

void print_row(const char* name, const RoundResult& r, long stock) {
  const long oversold = std::max(0L, r.sold - stock);
  std::string p50 = "-", p99 = "-";
  if (!r.latencies.empty()) {
    p50 = std::to_string(percentile(r.latencies, 0.50)) + " us";
    p99 = std::to_string(percentile(r.latencies, 0.99)) + " us";
  }
  std::printf("| %-16s | %6ld | %8ld | %11.0f | %12s | %12s |\n", name, r.sold, oversold,
              static_cast<double>(r.sold) / r.seconds, p50.c_str(), p99.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"distlock flash-sale demo"};
  std::string uri = "redis://127.0.0.1:6379";
  int processes = 4, threads = 8;
  long stock = 1000;
  bool worker = false, locked = false, unlocked = false;
  app.add_option("--uri", uri, "Redis URI")->capture_default_str();
  app.add_option("--processes", processes, "worker processes")->check(CLI::Range(1, 64));
  app.add_option("--threads", threads, "buyer threads per process")->check(CLI::Range(1, 256));
  app.add_option("--stock", stock, "units for sale")->check(CLI::Range(1L, 10'000'000L));
  app.add_flag("--worker", worker, "internal: run as a worker process");
  app.add_flag("--locked", locked, "internal: workers buy under the lock");
  app.add_flag("--unlocked", unlocked, "internal: workers buy without a lock");
  CLI11_PARSE(app, argc, argv);
  try {
    if (worker) return run_worker(uri, threads, locked);
    char self[4096];
    const auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) throw std::runtime_error("cannot find this program's path");
    self[n] = '\0';
    std::printf("Flash sale: %ld units, %d processes x %d threads buying one unit at a time.\n\n",
                stock, processes, threads);
    const auto bare = run_round(self, uri, processes, threads, stock, false);
    const auto safe = run_round(self, uri, processes, threads, stock, true);
    std::printf("| %-16s | %6s | %8s | %11s | %12s | %12s |\n", "run", "sold", "oversold",
                "orders/s", "acquire p50", "acquire p99");
    std::printf("|%s|%s|%s|%s|%s|%s|\n", "------------------", "--------", "----------",
                "-------------", "--------------", "--------------");
    print_row("without a lock", bare, stock);
    print_row("under distlock", safe, stock);
    std::printf("\nWithout a lock the read-check-write races: %ld orders for %ld units.\n",
                bare.sold, stock);
    std::printf("Under distlock exactly %ld units were sold and the stock ended at %ld.\n",
                safe.sold, safe.final_stock);
    return safe.sold == stock && safe.final_stock == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distlock-demo: %s\n", e.what());
    return 1;
  }
}
