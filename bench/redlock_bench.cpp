// redlock_bench: Redlock over 5 independent masters, distlock's RedlockGroup
// against node redlock v4 (bench/peers/node_redlock5.js) over the same 5
// redis-server processes, in the same run: lock/unlock
// pairs per second and acquire p50/p99. Starts the servers itself with the
// test fixture (free 127.0.0.1 ports, stopped by pid). Never part of CI.
//   redlock_bench [--seconds 3] [--concurrency 1,16]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "distlock/redlock.hpp"
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
      distlock::RedlockLock lock = group.lock("bench:rl:distlock:" + std::to_string(t));
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
      "{\"lib\":\"distlock\",\"concurrency\":%d,\"pairs\":%zu,\"errors\":%ld,\"pairs_per_s\":%.0f,"
      "\"acquire_p50_us\":%.1f,\"acquire_p99_us\":%.1f}\n",
      threads, all.size(), errors.load(), static_cast<double>(all.size()) / elapsed, at(0.5),
      at(0.99));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  std::string concurrency = "1,16";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--seconds") {
      seconds = std::stod(argv[i + 1]);
    } else if (flag == "--concurrency") {
      concurrency = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: redlock_bench [--seconds S] [--concurrency 1,16]\n");
      return 2;
    }
  }
  std::vector<std::unique_ptr<distlock::test::RedisServer>> servers;
  std::vector<std::string> uris;
  std::string ports;
  for (int i = 0; i < 5; ++i) {
    servers.push_back(std::make_unique<distlock::test::RedisServer>());
    uris.push_back(servers.back()->uri());
    ports += (i ? "," : "") + std::to_string(servers.back()->port());
  }
  for (std::size_t at = 0; at < concurrency.size();) {
    const auto comma = concurrency.find(',', at);
    const std::string c = concurrency.substr(at, comma - at);
    at = comma == std::string::npos ? concurrency.size() : comma + 1;
    distlock_run(uris, std::stoi(c), seconds);
    const std::string cmd = "node " DISTLOCK_BENCH_PEERS "/node_redlock5.js --ports " + ports +
                            " --seconds " + std::to_string(seconds) + " --concurrency " + c;
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "redlock_bench: node peer failed\n");
  }
  return 0;
}
