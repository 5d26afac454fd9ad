// The semaphore's bound under many threads (docs/semaphore.md): 24 threads
// of two Clients take 1 or 2 of 5 permits in every form (the Client's own
// permits, Permits with the watchdog's lease, Permits with a fixed lease that
// are sometimes abandoned until the lease ends); a sweep over the recorded
// stays proves that never more than 5 permits were in use at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/history.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::options_for;
using test::RedisServer;
using test::steady_now_ns;

// One stay inside: from the acquire's return to the release being sent (or
// to the lease's end for an abandoned Permit), holding `permits`.
struct Stay {
  std::int64_t enter_ns = 0;
  std::int64_t exit_ns = 0;
  std::int64_t permits = 0;
};

// The most permits the stays hold at any instant (one that ends as another
// enters counts as overlapping).
std::int64_t most_in_use(std::vector<Stay> stays) {
  std::vector<std::pair<std::int64_t, std::int64_t>> events;  // (time, +n / -n)
  for (const auto& s : stays) {
    events.emplace_back(s.enter_ns, s.permits);
    events.emplace_back(s.exit_ns, -s.permits);
  }
  std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  std::int64_t in_use = 0, most = 0;
  for (const auto& e : events) most = std::max(most, in_use += e.second);
  return most;
}

TEST(SemaphoreHistory, TwentyFourThreadsInEveryFormNeverHoldMoreThanThePermits) {
  RedisServer server;
  constexpr std::int64_t kPermits = 5;
  constexpr int kThreadsPerClient = 12, kRounds = 30;
  Client a(options_for(server)), b(options_for(server));
  ASSERT_TRUE(a.semaphore("hist").try_set_permits(kPermits));
  std::mutex mutex;
  std::vector<Stay> stays;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2 * kThreadsPerClient; ++t) {
    threads.emplace_back([&, t] {
      Semaphore s = (t % 2 == 0 ? a : b).semaphore("hist");
      const int kind = (t / 2) % 4;
      const std::int64_t n = kind % 2 == 0 ? 1 : 2;
      std::vector<Stay> mine;
      // Abandoned Permits and their stays: released at the end, which ends
      // the stays of those whose lease had not run out yet.
      std::vector<std::pair<std::size_t, Permit>> abandoned;
      for (int r = 0; r < kRounds; ++r) {
        Stay stay{0, 0, n};
        if (kind < 2) {  // the Client's own permits
          if (!s.try_acquire_for(n, 30s)) {
            ++failures;
            continue;
          }
          stay.enter_ns = steady_now_ns();
          std::this_thread::yield();
          stay.exit_ns = steady_now_ns();
          std::error_code ec;
          s.release(n, ec);
          if (ec) ++failures;  // lease_lost: the server took them back
        } else {               // a Permit: the watchdog's lease (kind 2) or a fixed 200 ms one
          std::optional<Permit> p =
              kind == 2 ? s.try_acquire_permit(n, 30s) : s.try_acquire_permit(n, 30s, 200ms);
          if (!p) {
            ++failures;
            continue;
          }
          stay.enter_ns = steady_now_ns();
          std::this_thread::yield();
          const std::int64_t lease_end = test::steady_ns(p->deadline());
          if (kind == 3 && r % 6 == 5) {
            // Abandoned: in use until its lease ends, when the server may
            // give its permits to others.
            stay.exit_ns = lease_end;
            abandoned.emplace_back(mine.size(), std::move(*p));
          } else {
            stay.exit_ns = std::min(steady_now_ns(), lease_end);
            p->release();
          }
        }
        mine.push_back(stay);
      }
      const std::int64_t now = steady_now_ns();
      for (auto& [i, p] : abandoned) mine[i].exit_ns = std::min(mine[i].exit_ns, now);
      abandoned.clear();
      const std::lock_guard guard(mutex);
      stays.insert(stays.end(), mine.begin(), mine.end());
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << "an acquire waited 30 s, or a release found its lease lost";
  ASSERT_FALSE(stays.empty());
  const std::int64_t most = most_in_use(stays);
  std::printf("[semaphore history] %zu stays, at most %lld permits in use\n", stays.size(),
              static_cast<long long>(most));
  EXPECT_LE(most, kPermits);
  EXPECT_EQ(most, kPermits) << "the permits were never all in use: the test proves little";
  EXPECT_EQ(a.semaphore("hist").available_permits(), kPermits) << "every permit came back";
}

}  // namespace
}  // namespace distlock
