// backends_bench (issue 28): the Redis and ZooKeeper backends side by side in
// one run on one machine, against Apache Curator's InterProcessMutex on the
// same ensemble. Starts its servers with the test fixtures: one redis-server
// and a 3-node ZooKeeper ensemble (free 127.0.0.1 ports, stopped by pid), and
// Curator as tests/interop/curator/CuratorPeer.java (one JVM, one
// CuratorFramework, its threads sharing it: Curator's usual shape).
//
//   backends_bench [--warmup 2] [--seconds 5] [--threads 1,16,64]
//                  [--handoff-threads 8] [--session-ms 10000] [--no-death]
//                  [--earlier FILE]
//
// Contenders: "redis Lock" (Client::lock, Redisson's layout) and "redis
// SimpleLock" (Client::simple_lock, SET NX PX) on one Client of the one
// redis-server; "distlock zookeeper" (Client::lock of a zookeeper:// Client:
// Curator's recipe, node for node) on one Client of the ensemble; "curator"
// (InterProcessMutex in the peer). Every contender's threads run the same
// loop for --warmup seconds, uncounted, and then for the --seconds of the
// measured window (the JVM's JIT warms up in the same time; the C++ side gets
// the same warm-up). A pair counts when it started inside the window; the
// rates divide by the time from the window's start until every thread
// stopped (the peer's bench mode counts the same way).
//
//   1. Uncontended: each thread its own name; lock+unlock pairs/s and the
//      acquire latency (the lock() call) p50 / p99.
//   2. Contended handoff: --handoff-threads threads on ONE name. Each thread
//      loops: lock; read the steady_clock time the last holder stamped right
//      before its unlock; stamp its own; unlock. A handoff is the time from
//      that stamp to the next holder's lock() returning, counted when the
//      next holder is another thread (a re-acquire by the releasing thread is
//      counted as barging). The peer measures the same in the JVM
//      (System.nanoTime, its handoff mode).
//   3. Death to next holder: a holder process (this binary's --hold mode, or
//      the peer's hold mode) holds a name and is SIGKILLed; a waiter already
//      queued (distlock: a thread of this process; Curator: a second peer in
//      wait mode) acquires when the lease runs out: the Redis key's TTL
//      (watchdog_timeout = --session-ms, renewed every third of it) or the
//      ZooKeeper session (session timeout --session-ms). One sample each.
//
// Then a table, the ratios issue 28 aims at (distlock zookeeper / curator
// pairs/s at 16 threads, target >= 2x; distlock zookeeper's handoff p50 /
// curator's, target <= 1x) and, for the seam's cost on the Redis path, this
// run's redis Lock pairs/s beside the figures of an earlier saved run
// (--earlier, default bench/results/i26-main-off.txt), labelled as such: a
// different process at a different time, not an A/B. Never part of CI.
//
//   backends_bench --hold URI NAME lock|simple WATCHDOG_MS
//     (internal: the death measurement's holder) takes the lock, prints
//     "acquired" and sleeps until killed.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <latch>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "distlock/client.hpp"
#include "distlock/client_options.hpp"
#include "distlock/lock.hpp"
#include "distlock/simple_lock.hpp"
#include "support/curator_peer.hpp"
#include "support/poll_until.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/zk_inspect.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using MakeLock = std::function<distlock::Lock(const std::string& name)>;

struct Settings {
  double warmup = 2;
  double seconds = 5;
  std::vector<int> threads{1, 16, 64};
  int handoff_threads = 8;
  long session_ms = 10'000;
  bool death = true;
  std::string earlier = std::string(DISTLOCK_BENCH_RESULTS_DIR) + "/i26-main-off.txt";
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

// Nearest rank, as the peer computes it; 0 for none.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// The warm-up and the measured window, shared by a run's threads.
struct Window {
  Clock::time_point from;
  Clock::time_point end;
  static Window after_warmup(double warmup, double seconds) {
    Window w;
    w.from = Clock::now() +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(warmup));
    w.end = w.from +
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    return w;
  }
};

struct Throughput {
  double pairs_per_s = -1;  // -1: failed
  double p50_us = 0;
  double p99_us = 0;
  long pairs = 0;
  long warmup_pairs = 0;
  // ZooKeeper: the requests the servers received per pair (-1: not counted).
  double requests_per_pair = -1;
};

// Each thread its own name (prefix + index); samples the lock() call.
Throughput uncontended(const MakeLock& make,
                       int threads,
                       const Settings& s,
                       const std::string& prefix) {
  std::vector<std::vector<double>> samples(static_cast<std::size_t>(threads));
  std::atomic<bool> failed{false};
  std::atomic<long> warmup_pairs{0};
  std::latch ready(threads + 1);
  std::latch go(1);
  Window window;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      distlock::Lock lock = make(prefix + std::to_string(t));
      std::vector<double>& mine = samples[static_cast<std::size_t>(t)];
      mine.reserve(1 << 16);
      long warm = 0;
      ready.count_down();
      go.wait();
      try {
        for (Clock::time_point start; (start = Clock::now()) < window.end && !failed;) {
          lock.lock();
          const Clock::time_point acquired = Clock::now();
          lock.unlock();
          if (start < window.from) {  // warm-up
            ++warm;
            continue;
          }
          mine.push_back(std::chrono::duration<double, std::micro>(acquired - start).count());
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "backends_bench: %s\n", e.what());
        failed = true;
      }
      warmup_pairs += warm;
    });
  }
  ready.arrive_and_wait();
  window = Window::after_warmup(s.warmup, s.seconds);
  go.count_down();
  for (auto& th : pool) th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - window.from).count();
  if (failed) return {};
  std::vector<double> all;
  for (const auto& v : samples) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  Throughput r;
  r.pairs = static_cast<long>(all.size());
  r.warmup_pairs = warmup_pairs;
  r.pairs_per_s = static_cast<double>(all.size()) / elapsed;
  r.p50_us = percentile(all, 0.50);
  r.p99_us = percentile(all, 0.99);
  return r;
}

struct Handoff {
  double p50_us = 0;
  double p99_us = 0;
  long pairs = 0;  // acquisitions
  double pairs_per_s = -1;
  long handoffs = 0;  // acquisitions from another thread's release
};

// All threads on `name`; see the header comment.
Handoff contended(const MakeLock& make, int threads, const Settings& s, const std::string& name) {
  std::vector<std::vector<double>> samples(static_cast<std::size_t>(threads));
  std::atomic<long> pairs{0};
  std::atomic<bool> failed{false};
  // The last release's stamp and releaser (-1: none yet); written by the
  // holder only.
  std::atomic<std::int64_t> released_at{0};
  std::atomic<int> released_by{-1};
  std::latch ready(threads + 1);
  std::latch go(1);
  Window window;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      distlock::Lock lock = make(name);
      std::vector<double>& mine = samples[static_cast<std::size_t>(t)];
      long acquisitions = 0;
      ready.count_down();
      go.wait();
      try {
        for (Clock::time_point start; (start = Clock::now()) < window.end && !failed;) {
          lock.lock();
          const std::int64_t acquired = now_ns();
          const int by = released_by.load();
          const std::int64_t at = released_at.load();
          if (start >= window.from) {
            ++acquisitions;
            if (by >= 0 && by != t) mine.push_back(static_cast<double>(acquired - at) / 1e3);
          }
          released_by.store(t);
          released_at.store(now_ns());
          lock.unlock();
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "backends_bench: %s\n", e.what());
        failed = true;
      }
      pairs += acquisitions;
    });
  }
  ready.arrive_and_wait();
  window = Window::after_warmup(s.warmup, s.seconds);
  go.count_down();
  for (auto& th : pool) th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - window.from).count();
  if (failed) return {};
  std::vector<double> all;
  for (const auto& v : samples) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  Handoff r;
  r.pairs = pairs;
  r.pairs_per_s = static_cast<double>(pairs) / elapsed;
  r.handoffs = static_cast<long>(all.size());
  r.p50_us = percentile(all, 0.50);
  r.p99_us = percentile(all, 0.99);
  return r;
}

// "RESULT a=1 b=2" -> {a: "1", b: "2"}.
std::map<std::string, std::string> result_fields(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream in(line);
  for (std::string f; in >> f;) {
    if (const auto eq = f.find('='); eq != std::string::npos) {
      fields[f.substr(0, eq)] = f.substr(eq + 1);
    }
  }
  return fields;
}

distlock::test::CuratorPeerOptions peer_options(const Settings& s) {
  distlock::test::CuratorPeerOptions o;
  o.session_timeout = std::chrono::milliseconds(s.session_ms);
  o.warmup = std::chrono::milliseconds(static_cast<long>(s.warmup * 1000));
  return o;
}

std::chrono::milliseconds run_bound(const Settings& s) {
  return std::chrono::milliseconds(static_cast<long>((s.warmup + s.seconds) * 1000)) + 60s;
}

Throughput curator_uncontended(const std::string& connect,
                               int threads,
                               const Settings& s,
                               const std::string& path) {
  try {
    distlock::test::CuratorPeer peer(
        connect, {"bench", path, std::to_string(threads), std::to_string(s.seconds), "uncontended"},
        peer_options(s));
    peer.expect_line("CONNECTED");
    Throughput r;
    if (s.warmup > 0) {
      r.warmup_pairs =
          std::stol(result_fields(peer.expect_line("WARMUP ", run_bound(s))).at("pairs"));
    }
    const auto f = result_fields(peer.expect_line("RESULT ", run_bound(s)));
    peer.wait_exit();
    r.pairs_per_s = std::stod(f.at("pairs_per_s"));
    r.p50_us = std::stod(f.at("acquire_p50_us"));
    r.p99_us = std::stod(f.at("acquire_p99_us"));
    r.pairs = std::stol(f.at("pairs"));
    return r;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backends_bench: curator: %s\n", e.what());
    return {};
  }
}

Handoff curator_handoff(const std::string& connect, const Settings& s, const std::string& path) {
  try {
    distlock::test::CuratorPeer peer(
        connect, {"handoff", path, std::to_string(s.handoff_threads), std::to_string(s.seconds)},
        peer_options(s));
    peer.expect_line("CONNECTED");
    const auto f = result_fields(peer.expect_line("RESULT ", run_bound(s)));
    peer.wait_exit();
    Handoff r;
    r.p50_us = std::stod(f.at("handoff_p50_us"));
    r.p99_us = std::stod(f.at("handoff_p99_us"));
    r.pairs = std::stol(f.at("pairs"));
    r.pairs_per_s = std::stod(f.at("pairs_per_s"));
    r.handoffs = std::stol(f.at("handoffs"));
    return r;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backends_bench: curator: %s\n", e.what());
    return {};
  }
}

// What every server of the ensemble has received from clients
// (zk_packets_received of mntr, summed): requests and pings.
long long zk_packets(const distlock::test::ZooKeeperEnsemble& zk) {
  long long total = 0;
  for (int i = 0; i < zk.node_count(); ++i) {
    const std::string mntr = zk.four_letter(i, "mntr");
    const std::string key = "zk_packets_received";
    const auto at = mntr.find(key);
    if (at != std::string::npos) total += std::stoll(mntr.substr(at + key.size()));
  }
  return total;
}

// `run` with the ensemble's received packets counted around it, per pair
// made (warm-up included). The count also holds connects, pings and the
// other idle sessions' pings (a handful per second in all).
Throughput counted(const distlock::test::ZooKeeperEnsemble& zk,
                   const std::function<Throughput()>& run) {
  const long long before = zk_packets(zk);
  Throughput r = run();
  const long long after = zk_packets(zk);
  if (r.pairs_per_s >= 0 && r.pairs + r.warmup_pairs > 0) {
    r.requests_per_pair =
        static_cast<double>(after - before) / static_cast<double>(r.pairs + r.warmup_pairs);
  }
  return r;
}

// --- Death to next holder ----------------------------------------------------

// This binary in --hold mode, its stdout on a pipe.
class Holder {
 public:
  explicit Holder(const std::vector<std::string>& argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category());
    distlock::test::SpawnOptions options;
    options.stdout_fd = fds[1];
    try {
      process_ = distlock::test::ChildProcess::spawn(argv, options);
    } catch (...) {
      ::close(fds[0]);
      ::close(fds[1]);
      throw;
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  ~Holder() {
    process_.kill_and_reap();
    ::close(fd_);
  }
  Holder(const Holder&) = delete;
  Holder& operator=(const Holder&) = delete;

  // True once a line starting with `prefix` came within `bound`.
  bool expect(const std::string& prefix, std::chrono::milliseconds bound) {
    const auto deadline = Clock::now() + bound;
    for (;;) {
      for (auto nl = buffer_.find('\n'); nl != std::string::npos; nl = buffer_.find('\n')) {
        const std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (line.rfind(prefix, 0) == 0) return true;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return false;
      char chunk[512];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  distlock::test::ChildProcess& process() { return process_; }

 private:
  distlock::test::ChildProcess process_;
  int fd_ = -1;
  std::string buffer_;
};

int hold_mode(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: backends_bench --hold URI NAME lock|simple WATCHDOG_MS\n");
    return 2;
  }
  distlock::ClientOptions o = distlock::ClientOptions::from_uri(argv[2]);
  o.watchdog_timeout = std::chrono::milliseconds(std::stol(argv[5]));
  distlock::Client client(o);
  const std::string kind = argv[4];
  distlock::Lock lock = kind == "simple" ? distlock::Lock(client.simple_lock(argv[3]).as_lock())
                                         : client.lock(argv[3]);
  lock.lock();
  std::printf("acquired\n");
  std::fflush(stdout);
  for (;;) ::pause();
}

struct Death {
  double ms = -1;       // kill -> next holder; -1: not measured
  double held_ms = -1;  // how long the holder had held before the kill
  std::string error;
};

// A holder process of this binary on `name`, a waiter thread of this process
// on `make(name)`; `queued` says when the waiter is in line.
Death distlock_death(const std::string& self,
                     const std::string& uri,
                     const std::string& kind,
                     const MakeLock& make,
                     const std::string& name,
                     const Settings& s,
                     const std::function<bool()>& queued) {
  Death d;
  try {
    Holder holder({self, "--hold", uri, name, kind, std::to_string(s.session_ms)});
    if (!holder.expect("acquired", 60s)) throw std::runtime_error("the holder did not acquire");
    const auto held_since = Clock::now();
    std::atomic<std::int64_t> acquired_at{0};
    std::atomic<bool> waiting{false};
    std::thread waiter([&] {
      distlock::Lock lock = make(name);
      waiting = true;
      std::error_code ec;
      if (lock.try_lock_for(std::chrono::milliseconds(s.session_ms) * 3 + 30s, ec)) {
        acquired_at = now_ns();
        lock.unlock();
      } else if (ec) {
        std::fprintf(stderr, "backends_bench: the waiter: %s\n", ec.message().c_str());
      }
    });
    const bool in_line =
        distlock::test::poll_until([&] { return waiting && queued(); }, Clock::now() + 30s);
    const std::int64_t killed_at = now_ns();
    holder.process().signal(SIGKILL);
    d.held_ms = std::chrono::duration<double, std::milli>(Clock::now() - held_since).count();
    holder.process().kill_and_reap();
    waiter.join();
    if (!in_line) d.error = "the waiter was not seen in line before the kill";
    if (acquired_at == 0) throw std::runtime_error("the waiter did not acquire");
    d.ms = static_cast<double>(acquired_at - killed_at) / 1e6;
  } catch (const std::exception& e) {
    d.error = e.what();
  }
  return d;
}

Death curator_death(const std::string& connect,
                    distlock::test::ZkInspector& zk,
                    const std::string& path,
                    const Settings& s) {
  Death d;
  try {
    distlock::test::CuratorPeerOptions o = peer_options(s);
    o.warmup = 0ms;
    distlock::test::CuratorPeer holder(connect, {"hold", path}, o);
    holder.expect_line("ACQUIRED ");
    const auto held_since = Clock::now();
    distlock::test::CuratorPeer waiter(connect, {"wait", path}, o);
    waiter.expect_line("WAITING");
    if (!distlock::test::poll_until([&] { return zk.queue(path).size() == 2; },
                                    Clock::now() + 30s)) {
      d.error = "the waiter was not seen in line before the kill";
    }
    const auto killed_at = Clock::now();
    holder.kill();
    d.held_ms = std::chrono::duration<double, std::milli>(killed_at - held_since).count();
    waiter.expect_line("ACQUIRED ", std::chrono::milliseconds(s.session_ms) * 3 + 30s);
    d.ms = std::chrono::duration<double, std::milli>(Clock::now() - killed_at).count();
  } catch (const std::exception& e) {
    d.error = e.what();
  }
  return d;
}

// --- Output ------------------------------------------------------------------

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string figure(double v, int decimals = 0) {
  if (v < 0) return "failed";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  // Thousands separators for the integer part.
  std::string s = buf;
  const auto dot = s.find('.');
  for (auto i = (dot == std::string::npos ? s.size() : dot); i > 3; i -= 3) s.insert(i - 3, ",");
  return s;
}

// "| uncontended Lock, N threads: pairs/s | A | B | peer | ..." of the
// earlier run's summary: {A, B} as written; nullopt when absent or "-".
std::optional<std::pair<std::string, std::string>> earlier_pairs(const std::string& file,
                                                                 int threads) {
  std::ifstream in(file);
  const std::string row = "| uncontended Lock, " + std::to_string(threads) + " threads: pairs/s |";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(row, 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream cols(line.substr(row.size()));
    for (std::string cell; std::getline(cols, cell, '|');) {
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
    }
    if (cells.size() < 2 || cells[0] == "-" || cells[1] == "-") return std::nullopt;
    return std::make_pair(cells[0], cells[1]);
  }
  return std::nullopt;
}

// A path under this source tree as "bench/results/..."; others as given.
std::string shown_path(const std::string& path) {
  const auto at = path.rfind("/bench/results/");
  return at == std::string::npos ? path : path.substr(at + 1);
}

double number(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  return std::stod(text);
}

std::vector<int> int_list(const std::string& list) {
  std::vector<int> out;
  for (std::size_t at = 0; at < list.size();) {
    const auto comma = list.find(',', at);
    out.push_back(std::stoi(list.substr(at, comma - at)));
    at = comma == std::string::npos ? list.size() : comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--hold") return hold_mode(argc, argv);
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const bool has_value = i + 1 < argc;
    if (flag == "--no-death") {
      s.death = false;
    } else if (flag == "--warmup" && has_value) {
      s.warmup = std::stod(argv[++i]);
    } else if (flag == "--seconds" && has_value) {
      s.seconds = std::stod(argv[++i]);
    } else if (flag == "--threads" && has_value) {
      s.threads = int_list(argv[++i]);
    } else if (flag == "--handoff-threads" && has_value) {
      s.handoff_threads = std::stoi(argv[++i]);
    } else if (flag == "--session-ms" && has_value) {
      s.session_ms = std::stol(argv[++i]);
    } else if (flag == "--earlier" && has_value) {
      s.earlier = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: backends_bench [--warmup S] [--seconds S] [--threads 1,16,64] "
                   "[--handoff-threads N] [--session-ms MS] [--no-death] [--earlier FILE]\n");
      return 2;
    }
  }
  const auto run_start = Clock::now();
  std::printf(
      "backends_bench: warm-up %.1f s then a %.1f s window for every contender; "
      "%u cores; load average at start %s\n",
      s.warmup, s.seconds, std::thread::hardware_concurrency(), load_average().c_str());

  distlock::test::RedisServer redis;
  distlock::test::ZooKeeperEnsemble ensemble;  // 3 nodes, tickTime 200 ms
  const std::string connect = ensemble.connect_string();
  const std::string session = std::to_string(s.session_ms);
  const std::string zk_uri = "zookeeper://" + connect + "/bench?session_timeout_ms=" + session;
  distlock::Client redis_client(redis.uri());
  distlock::Client zk_client(zk_uri);
  distlock::test::ZkInspector inspector(connect);
  std::printf(
      "servers: %s; ZooKeeper %s, 3 nodes, leader node %d, tickTime 200 ms, "
      "forceSync=no (test fixture)\n",
      first_line(redis.cli({"INFO", "server"})
                     .substr(redis.cli({"INFO", "server"}).find("redis_version:")))
          .c_str(),
      first_line(ensemble.four_letter(0, "srvr")).c_str(), ensemble.leader());
  std::fflush(stdout);

  const MakeLock redis_lock = [&](const std::string& n) { return redis_client.lock(n); };
  const MakeLock redis_simple = [&](const std::string& n) {
    return distlock::Lock(redis_client.simple_lock(n).as_lock());
  };
  const MakeLock zk_lock = [&](const std::string& n) { return zk_client.lock(n); };
  const char* const names[] = {"redis Lock", "redis SimpleLock", "distlock zookeeper", "curator"};
  constexpr int kContenders = 4;

  // 1. Uncontended.
  std::map<int, std::vector<Throughput>> tp;
  for (const int threads : s.threads) {
    const std::string prefix = "u" + std::to_string(threads) + "-";
    auto& row = tp[threads];
    row.push_back(uncontended(redis_lock, threads, s, prefix + "lock-"));
    row.push_back(uncontended(redis_simple, threads, s, prefix + "simple-"));
    row.push_back(
        counted(ensemble, [&] { return uncontended(zk_lock, threads, s, prefix + "zk-"); }));
    row.push_back(counted(ensemble, [&] {
      return curator_uncontended(connect, threads, s, "/curator/" + prefix + "c");
    }));
    for (int c = 0; c < kContenders; ++c) {
      const Throughput& r = row[static_cast<std::size_t>(c)];
      std::printf(
          "uncontended contender=\"%s\" threads=%d pairs_per_s=%.1f acquire_p50_us=%.0f "
          "acquire_p99_us=%.0f pairs=%ld warmup_pairs=%ld",
          names[c], threads, r.pairs_per_s, r.p50_us, r.p99_us, r.pairs, r.warmup_pairs);
      if (r.requests_per_pair >= 0) {
        std::printf(" zk_requests_per_pair=%.2f", r.requests_per_pair);
      }
      std::printf("\n");
    }
    std::fflush(stdout);
  }

  // 2. Contended handoff.
  std::vector<Handoff> ho;
  ho.push_back(contended(redis_lock, s.handoff_threads, s, "h-lock"));
  ho.push_back(contended(redis_simple, s.handoff_threads, s, "h-simple"));
  ho.push_back(contended(zk_lock, s.handoff_threads, s, "h-zk"));
  ho.push_back(curator_handoff(connect, s, "/curator/h"));
  for (int c = 0; c < kContenders; ++c) {
    const Handoff& r = ho[static_cast<std::size_t>(c)];
    std::printf(
        "handoff contender=\"%s\" threads=%d handoff_p50_us=%.0f handoff_p99_us=%.0f "
        "acquisitions=%ld acquisitions_per_s=%.1f handoffs=%ld\n",
        names[c], s.handoff_threads, r.p50_us, r.p99_us, r.pairs, r.pairs_per_s, r.handoffs);
  }
  std::fflush(stdout);

  // 3. Death to next holder.
  std::vector<Death> deaths;
  if (s.death) {
    const std::string self = "/proc/self/exe";
    char exe[4096];
    const ssize_t n = ::readlink(self.c_str(), exe, sizeof exe - 1);
    const std::string binary = n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : argv[0];
    // A Redis waiter is in line once it listens on the lock's channel.
    deaths.push_back(distlock_death(binary, redis.uri(), "lock", redis_lock, "d-lock", s, [&] {
      const std::string r = redis.cli({"PUBSUB", "NUMSUB", "redisson_lock__channel:{d-lock}"});
      return r.find("\n1") != std::string::npos;
    }));
    deaths.push_back(distlock_death(binary, zk_uri, "lock", zk_lock, "d-zk", s,
                                    [&] { return inspector.queue("/bench/d-zk").size() == 2; }));
    deaths.push_back(curator_death(connect, inspector, "/curator/d", s));
    const char* const death_names[] = {"redis Lock", "distlock zookeeper", "curator"};
    for (std::size_t c = 0; c < deaths.size(); ++c) {
      std::printf(
          "death contender=\"%s\" kill_to_next_holder_ms=%.0f held_before_kill_ms=%.0f%s%s\n",
          death_names[c], deaths[c].ms, deaths[c].held_ms,
          deaths[c].error.empty() ? "" : " error=", deaths[c].error.c_str());
    }
  }

  // The table.
  std::printf(
      "\n## Uncontended: lock+unlock pairs/s (acquire p50 / p99 us), each thread its own "
      "name\n\n| threads |");
  for (const char* name : names) std::printf(" %s |", name);
  std::printf("\n|---|");
  for (int c = 0; c < kContenders; ++c) std::printf("---|");
  std::printf("\n");
  for (const int threads : s.threads) {
    std::printf("| %d |", threads);
    for (const Throughput& r : tp[threads]) {
      std::printf(" %s (%s / %s) |", figure(r.pairs_per_s).c_str(), figure(r.p50_us).c_str(),
                  figure(r.p99_us).c_str());
    }
    std::printf("\n");
  }
  std::printf(
      "\nRequests the ensemble received per pair (zk_packets_received of every node, "
      "around the whole run of the contender, warm-up and connect included):\n");
  for (const int threads : s.threads) {
    std::printf("  %d thread(s): distlock zookeeper %.2f, curator %.2f\n", threads,
                tp[threads][2].requests_per_pair, tp[threads][3].requests_per_pair);
  }
  std::printf(
      "\n## Contended: %d threads on one name\n\n"
      "| contender | handoff p50 us | handoff p99 us | acquisitions/s | handoffs / "
      "acquisitions |\n|---|---|---|---|---|\n",
      s.handoff_threads);
  for (int c = 0; c < kContenders; ++c) {
    const Handoff& r = ho[static_cast<std::size_t>(c)];
    std::printf("| %s | %s | %s | %s | %ld / %ld |\n", names[c], figure(r.p50_us).c_str(),
                figure(r.p99_us).c_str(), figure(r.pairs_per_s).c_str(), r.handoffs, r.pairs);
  }
  if (s.death) {
    std::printf(
        "\n## Death to next holder (one sample each): holder SIGKILLed, a waiter "
        "already in line\n\n| contender | lease | kill -> next holder ms | held before "
        "the kill ms |\n|---|---|---|---|\n");
    const std::string lease_redis = "watchdog_timeout " + session + " ms (renewed every third)";
    const std::string lease_zk = "session timeout " + session + " ms";
    const std::string leases[] = {lease_redis, lease_zk, lease_zk};
    const char* const death_names[] = {"redis Lock", "distlock zookeeper", "curator"};
    for (std::size_t c = 0; c < deaths.size(); ++c) {
      std::printf(
          "| %s | %s | %s | %s |\n", death_names[c], leases[c].c_str(),
          deaths[c].error.empty() || deaths[c].ms >= 0 ? figure(deaths[c].ms).c_str() : "failed",
          figure(deaths[c].held_ms).c_str());
    }
  }

  // The ratios issue 28 aims at.
  std::printf("\n## Issue 28's aims\n\n");
  if (tp.count(16) != 0) {
    const double zk = tp[16][2].pairs_per_s;
    const double cur = tp[16][3].pairs_per_s;
    if (zk > 0 && cur > 0) {
      std::printf(
          "distlock zookeeper / curator pairs/s at 16 threads: %s / %s = %.2fx "
          "(target >= 2x: %s)\n",
          figure(zk).c_str(), figure(cur).c_str(), zk / cur, zk / cur >= 2 ? "met" : "NOT met");
    }
  }
  for (const int threads : s.threads) {
    const double zk = tp[threads][2].pairs_per_s;
    const double cur = tp[threads][3].pairs_per_s;
    if (zk > 0 && cur > 0) {
      std::printf("  (at %d thread(s): %.2fx)\n", threads, zk / cur);
    }
  }
  if (ho[2].handoffs > 0 && ho[3].handoffs > 0) {
    std::printf("distlock zookeeper / curator handoff p50: %s / %s us = %.2fx (target <= 1x: %s)\n",
                figure(ho[2].p50_us).c_str(), figure(ho[3].p50_us).c_str(),
                ho[2].p50_us / ho[3].p50_us, ho[2].p50_us <= ho[3].p50_us ? "met" : "NOT met");
  }

  // The seam's cost on the Redis path, against an earlier saved run.
  std::printf(
      "\n## redis Lock pairs/s: this run beside an EARLIER RUN, DIFFERENT PROCESS\n\n"
      "earlier: %s (columns A and B: two runs of one build of main before the backend "
      "seam; its conditions are in docs/performance.md, not this run's)\n",
      shown_path(s.earlier).c_str());
  for (const int threads : s.threads) {
    const double now = tp[threads][0].pairs_per_s;
    const auto before = earlier_pairs(s.earlier, threads);
    if (!before) {
      std::printf("  %d thread(s): this run %s; no earlier figure for this workload\n", threads,
                  figure(now).c_str());
      continue;
    }
    std::printf(
        "  %d thread(s): this run %s; earlier run, different process: A %s, B %s "
        "(this / B = %.2fx)\n",
        threads, figure(now).c_str(), before->first.c_str(), before->second.c_str(),
        now > 0 ? now / number(before->second) : 0.0);
  }
  std::printf("\nload average at end %s; total %.0f s\n", load_average().c_str(),
              std::chrono::duration<double>(Clock::now() - run_start).count());
  return 0;
}
