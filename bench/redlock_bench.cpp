// redlock_bench: Redlock over 5 independent masters, distlock's RedlockGroup
// against node redlock v4 (bench/peers/node_redlock5.js) over the same 5
// redis-server processes, in the same run. One JSON object per line on
// stdout. Never part of CI; `redlock_bench --help` lists the options, and
// scripts/redlock_ab.sh runs it (or two builds of it) over five masters.
//
// Uncontended: W threads, each locking and unlocking its own name: pairs/s
// and acquire p50/p99. Contended (redlock_contended.cpp): P processes x T
// threads on one name: acquisitions/s, handoff and wait.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "args.hpp"
#include "distlock/redlock.hpp"
#include "redlock_contended.hpp"
#include "support/redis_server.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void distlock_run(const std::vector<std::string>& uris, int threads, double seconds) {
  distlock::RedlockGroup group(uris);
  std::vector<std::vector<long>> samples(static_cast<std::size_t>(threads));
  std::atomic<long> errors{0};
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      distlock::RedlockLock lock =
          group.lock("bench:rl:distlock:" + std::to_string(getpid()) + ":" + std::to_string(t));
      while (Clock::now() < deadline) {
        const auto t0 = Clock::now();
        std::error_code ec;
        if (!lock.try_lock(ec) || ec) {
          ++errors;
          continue;
        }
        samples[static_cast<std::size_t>(t)].push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
        lock.unlock(ec);
      }
    });
  }
  for (auto& th : pool) th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<long> all;
  for (auto& s : samples) all.insert(all.end(), s.begin(), s.end());
  std::sort(all.begin(), all.end());
  auto at = [&](double q) {
    if (all.empty()) return 0.0;
    const auto i =
        std::min(all.size() - 1, static_cast<std::size_t>(q * static_cast<double>(all.size())));
    return static_cast<double>(all[i]) / 1000.0;
  };
  std::printf(
      "{\"scenario\":\"uncontended\",\"lib\":\"distlock\",\"concurrency\":%d,\"pairs\":%zu,"
      "\"errors\":%ld,\"pairs_per_s\":%.0f,"
      "\"acquire_p50_us\":%.1f,\"acquire_p99_us\":%.1f}\n",
      threads, all.size(), errors.load(), static_cast<double>(all.size()) / elapsed, at(0.5),
      at(0.99));
  std::fflush(stdout);
}

constexpr const char* kUsage = R"(usage: redlock_bench [options]
  Redlock over 5 masters: distlock's RedlockGroup, then node redlock v4
  (bench/peers/node_redlock5.js), over the same masters. JSON lines on stdout.

  --ports P1,...,P5        use these running masters on 127.0.0.1 (default:
                           start 5 redis-servers on free ports, stopped at exit)
  --scenario S             uncontended (default), contended, or both
  --contended              the same as --scenario contended
  --libs L                 distlock,node (default) or either one
  --seconds S              uncontended: seconds per run (default 3)
  --concurrency 1,16       uncontended: threads (node: async loops) per run
  --processes 2            contended: processes ...
  --threads 8              contended: ... x threads (node: async workers) each
  --contended-seconds 10   contended: seconds per run
  --name NAME              contended: the one lock name (default: per run)
  --think-ms 0[,20...]     contended: ms a thread waits after its release
                           before it asks again, one run each (0: at once)
  --retry-delay-ms D       distlock's RedlockOptions::retry_delay and
  --retry-jitter-ms J      retry_jitter (default: the library's)
  --node-retry R[,R...]    contended node runs, one per R: matched (the same
                           interval distribution as distlock's, default),
                           default (redlock v4's 200 +- 100 ms), or D:J
                           (redlock's retryDelay D +- retryJitter J)
  --help                   this text
)";

bool known_flags(int argc, char** argv) {
  static const std::set<std::string> flags = {
      "--ports",          "--scenario",        "--contended",  "--libs",    "--seconds",
      "--concurrency",    "--processes",       "--threads",    "--name",    "--contended-seconds",
      "--retry-delay-ms", "--retry-jitter-ms", "--node-retry", "--think-ms"};
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--", 2) == 0 && flags.count(argv[i]) == 0) {
      std::cerr << "redlock_bench: unknown option " << argv[i] << "\n" << kUsage;
      return false;
    }
  }
  return true;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < s.size();) {
    const auto comma = std::min(s.find(',', at), s.size());
    out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

// The masters: the given ports, or five servers started here (kept in
// `owned` so they live as long as the run).
std::vector<std::string> master_ports(
    const distlock_bench::Args& args,
    std::vector<std::unique_ptr<distlock::test::RedisServer>>& owned) {
  if (args.has("ports")) return split_list(args.str("ports", ""));
  std::vector<std::string> ports;
  for (int i = 0; i < 5; ++i) {
    owned.push_back(std::make_unique<distlock::test::RedisServer>());
    ports.push_back(std::to_string(owned.back()->port()));
  }
  return ports;
}

void uncontended(const distlock_bench::Args& args,
                 const std::vector<std::string>& uris,
                 const std::vector<std::string>& ports,
                 const std::string& libs) {
  const double seconds = args.real("seconds", 3);
  for (const int c : args.ints("concurrency", {1, 16})) {
    if (libs.find("distlock") != std::string::npos) distlock_run(uris, c, seconds);
    if (libs.find("node") == std::string::npos) continue;
    std::string joined;
    for (const auto& p : ports) joined += (joined.empty() ? "" : ",") + p;
    const std::string cmd = "node " DISTLOCK_BENCH_PEERS "/node_redlock5.js --ports " + joined +
                            " --seconds " + std::to_string(seconds) + " --concurrency " +
                            std::to_string(c);
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "redlock_bench: node peer failed\n");
  }
}

void contended(const distlock_bench::Args& args,
               const std::vector<std::string>& uris,
               const std::vector<std::string>& ports,
               const std::string& libs,
               const std::string& self) {
  distlock_bench::RedlockContendedConfig config;
  config.uris = uris;
  config.ports = ports;
  config.processes = static_cast<int>(args.num("processes", 2));
  config.threads = static_cast<int>(args.num("threads", 8));
  config.seconds = args.real("contended-seconds", 10);
  config.name = args.str("name", "");
  config.retry_delay_ms = args.num("retry-delay-ms", -1);
  config.retry_jitter_ms = args.num("retry-jitter-ms", -1);
  for (const int think : args.ints("think-ms", {0})) {
    config.think_ms = think;
    if (libs.find("distlock") != std::string::npos) {
      distlock_bench::run_redlock_contended(config, self);
    }
    if (libs.find("node") == std::string::npos) continue;
    for (const auto& retry : split_list(args.str("node-retry", "matched"))) {
      std::string r = retry;
      std::replace(r.begin(), r.end(), ':', ',');
      distlock_bench::run_node_redlock_contended(config, r);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--contended-child") == 0) {
    return distlock_bench::run_redlock_contended_child(distlock_bench::Args(argc, argv, 2));
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::cout << kUsage;
      return 0;
    }
  }
  if (!known_flags(argc, argv)) return 2;
  try {
    const distlock_bench::Args args(argc, argv, 1);
    std::string scenario = args.str("scenario", "uncontended");
    if (args.has("contended")) scenario = "contended";
    const std::string libs = args.str("libs", "distlock,node");
    std::vector<std::unique_ptr<distlock::test::RedisServer>> owned;
    const auto ports = master_ports(args, owned);
    std::vector<std::string> uris;
    for (const auto& p : ports) uris.push_back("redis://127.0.0.1:" + p);
    if (scenario == "uncontended" || scenario == "both") uncontended(args, uris, ports, libs);
    if (scenario == "contended" || scenario == "both") contended(args, uris, ports, libs, argv[0]);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "redlock_bench: " << e.what() << "\n" << kUsage;
    return 2;
  }
}
