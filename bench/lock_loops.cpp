#include "lock_loops.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <latch>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "distlock/client.hpp"
#include "distlock/client_options.hpp"
#include "distlock/simple_lock.hpp"
#include "support/poll_until.hpp"
#include "support/process.hpp"

namespace distlock::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

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

}  // namespace

Throughput uncontended(const MakeLock& make,
                       int threads,
                       const LoopSettings& s,
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

Handoff contended(const MakeLock& make,
                  int threads,
                  const LoopSettings& s,
                  const std::string& name) {
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

namespace {

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

}  // namespace

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

Death death_of_holder(const std::vector<std::string>& holder_argv,
                      const MakeLock& make,
                      const std::string& name,
                      const LoopSettings& s,
                      const std::function<bool()>& queued) {
  Death d;
  try {
    Holder holder(holder_argv);
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

}  // namespace distlock::bench
