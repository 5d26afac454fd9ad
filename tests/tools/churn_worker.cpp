// A worker process for the randomized pending-release test (issue 8): its
// threads lock and unlock fenced locks thread-owned while the test pauses
// the server and kills connections.
//
//   churn_worker URI PROCESS THREADS NAMES DURATION_MS SEED
//
// Prints one line per event, flushed at once:
//   "hold name=N token=T"            a new holding was confirmed (depth 0 -> 1)
//   "held-after-unlock name=N"       an unlock reported success, yet the server
//                                    still had this thread's hold right after
//   "not-owner-on-repeat name=N"     unlock called again after an unknown outcome
//                                    said not_owner instead of how it ended
//   "done ops=N errors=E unknown=U"  finished: every hold given up and settled
// then waits for SIGUSR1 (so the test can look at the server while the
// Client is still open) and exits 0.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"

namespace {

using namespace std::chrono_literals;
using distlock::errc;

std::mutex out_mutex;

void say(const std::string& line) {
  std::lock_guard lock(out_mutex);
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

bool unknown(std::error_code ec) {
  return ec == errc::timeout || ec == errc::connection_lost;
}

// Asks the server whether this thread still holds `lock`, until it answers
// (the server may be paused); nullopt if it never did within the bound.
std::optional<bool> held_by_this_thread(const distlock::Lock& lock) {
  const auto bound = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < bound) {
    try {
      return lock.is_held_by_current_thread();
    } catch (const distlock::Error&) {
      // timeout / connection_lost during a fault: ask again
    }
  }
  return std::nullopt;
}

struct Totals {
  std::atomic<long> ops{0};
  std::atomic<long> errors{0};
  std::atomic<long> unknown{0};
};

void churn(distlock::Client& client,
           int names,
           std::chrono::steady_clock::time_point end,
           unsigned seed,
           Totals& totals) {
  std::mt19937 rng(seed);
  while (std::chrono::steady_clock::now() < end) {
    const std::string name = "churn:" + std::to_string(rng() % static_cast<unsigned>(names));
    distlock::Lock lock = client.fenced_lock(name);
    std::error_code ec;
    const auto wait = std::chrono::milliseconds(rng() % 400);
    if (!lock.try_lock_for(wait, std::nullopt, ec)) {
      if (ec) ++totals.errors;
      continue;
    }
    say("hold name=" + name + " token=" + std::to_string(lock.fencing_token().value_or(0)));
    ++totals.ops;
    lock.unlock(ec);
    // Called again after an unknown outcome, unlock reports how that release
    // ended; it never releases another level (the count is already 0).
    for (int i = 0; unknown(ec) && i < 100; ++i) {
      ++totals.unknown;
      lock.unlock(ec);
      if (ec == errc::not_owner) say("not-owner-on-repeat name=" + name);
    }
    if (!ec) {
      const auto held = held_by_this_thread(lock);
      if (!held.has_value() || *held) say("held-after-unlock name=" + name);
    } else if (ec != errc::lease_lost) {
      ++totals.errors;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: churn_worker URI PROCESS THREADS NAMES DURATION_MS SEED\n");
    return 2;
  }
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  const int process = std::stoi(argv[2]);
  const int threads = std::stoi(argv[3]);
  const int names = std::stoi(argv[4]);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::stol(argv[5]));
  const unsigned seed = static_cast<unsigned>(std::stoul(argv[6]));

  distlock::ClientOptions o = distlock::ClientOptions::from_uri(argv[1]);
  o.watchdog_timeout = 10s;
  o.command_timeout = 300ms;
  o.reconnect_min_delay = 10ms;
  o.reconnect_max_delay = 100ms;
  o.client_name = "churn-" + std::to_string(process);
  distlock::Client client(o);
  Totals totals;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back(churn, std::ref(client), names, end,
                      seed * 7919u + static_cast<unsigned>(process * 100 + t), std::ref(totals));
  }
  for (auto& t : pool) t.join();
  say("done ops=" + std::to_string(totals.ops.load()) + " errors=" +
      std::to_string(totals.errors.load()) + " unknown=" + std::to_string(totals.unknown.load()));
  int signal = 0;
  sigwait(&usr1, &signal);
  return 0;
}
