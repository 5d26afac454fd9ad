// A semaphore release of k wakes up to k waiters, end to end: across
// Clients and across the threads of one Client (docs/semaphore.md, Waiting).
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "distlock/distlock.hpp"
#include "integration/settled_waiters.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::options_for;
using test::RedisServer;

// Every Client's lease: the holder's lease end, and each waiter's fallback
// retry (a third of its lease), lie far beyond the bound below.
constexpr auto kLongLease = std::chrono::minutes(10);

// 2 Clients x 3 threads each wait for 1 permit; a third Client holds all 6
// and gives them back in one release, whose message carries 6. Each wait
// outlasts the bound (its last attempt, at its deadline, cannot rescue it):
// all 6 get in within the bound only if that one message woke every one of
// them, 3 in each Client.
TEST(Semaphore, OneReleaseOfKWakesKWaitersAcrossClientsAndThreads) {
  constexpr int kClients = 2;
  constexpr int kThreads = 3;
  constexpr int k = kClients * kThreads;
  RedisServer server;
  Client holder(options_for(server, kLongLease));
  Semaphore held = holder.semaphore("wide");
  ASSERT_TRUE(held.try_set_permits(k));
  held.acquire(k);
  const long long before = test::evalsha_calls(holder);
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<std::future<bool>> waits;
  for (int c = 0; c < kClients; ++c) {
    // Each waiter's attempts are counted as the server's script calls.
    clients.push_back(
        std::make_unique<Client>(test::one_call_per_operation(options_for(server, kLongLease))));
    for (int t = 0; t < kThreads; ++t) {
      waits.push_back(
          std::async(std::launch::async, [sem = clients.back()->semaphore("wide")]() mutable {
            return sem.try_acquire_for(1, 60s);
          }));
    }
  }
  // Each waiter tried once, subscribed, and tried again: asleep now.
  ASSERT_TRUE(test::waiters_settled(holder, "redisson_sc:{wide}", kClients, before, 2 * k));
  for (auto& w : waits) EXPECT_EQ(w.wait_for(0ms), std::future_status::timeout);
  const long long settled = test::evalsha_calls(holder);
  held.release(k);
  for (std::size_t i = 0; i < waits.size(); ++i) {
    ASSERT_EQ(waits[i].wait_for(20s), std::future_status::ready)
        << "waiter " << i << " (Client " << i / kThreads << ") was not woken";
    EXPECT_TRUE(waits[i].get());
  }
  EXPECT_EQ(test::evalsha_calls(holder) - settled, 1 + k)
      << "the release, then one attempt per waiter, each admitted";
  for (const auto& c : clients) EXPECT_EQ(c->semaphore("wide").held_permits(), kThreads);
  EXPECT_EQ(held.available_permits(), 0);
}

}  // namespace
}  // namespace distlock
