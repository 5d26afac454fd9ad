// The rate limiter against real redis-server processes. Times that matter are
// read on the server (the hash's `ts` is the server's TIME of the last
// admission; the hammer records TIME after every admission).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

// The server's TIME of the limiter's last admission, in microseconds.
long long last_admission(Client& client, const std::string& name) {
  return std::stoll(client.command("HGET", name, "ts").as_string());
}

// The server's TIME now, in microseconds.
long long server_time(Client& client) {
  return client.command("EVAL", "local t = redis.call('time') return t[1] * 1000000 + t[2]", 0)
      .as_integer();
}

TEST(RateLimiter, TrySetRateSucceedsOnlyForTheFirstCallAcrossClients) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  EXPECT_TRUE(a.rate_limiter("api").try_set_rate(5, 1000ms));
  EXPECT_FALSE(b.rate_limiter("api").try_set_rate(10, 2000ms));
  EXPECT_FALSE(a.rate_limiter("api").try_set_rate(5, 1000ms));
  EXPECT_EQ(a.command("HGET", "api", "rate").as_string(), "5");
  EXPECT_EQ(a.command("HGET", "api", "interval").as_string(), "1000");
  EXPECT_EQ(b.rate_limiter("api").available_permits(), 5);
}

TEST(RateLimiter, AFreshLimiterAdmitsExactlyTheRateAtOnceAcrossClients) {
  RedisServer server;
  Client a(options_for(server));
  ASSERT_TRUE(a.rate_limiter("api").try_set_rate(10, std::chrono::hours(1)));
  std::vector<std::unique_ptr<Client>> clients;
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < 3; ++c) {
    clients.push_back(std::make_unique<Client>(options_for(server)));
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&, limiter = clients.back()->rate_limiter("api")]() mutable {
        for (int i = 0; i < 5; ++i) admitted += limiter.try_acquire() ? 1 : 0;
      });
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(admitted.load(), 10) << "45 tries, a burst of exactly the rate";
  EXPECT_EQ(a.rate_limiter("api").available_permits(), 0);
}

TEST(RateLimiter, AvailablePermitsCountWhatIsLeft) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(3, std::chrono::hours(1)));
  EXPECT_EQ(limiter.available_permits(), 3);
  EXPECT_TRUE(limiter.try_acquire(2));
  EXPECT_EQ(limiter.available_permits(), 1);
  EXPECT_FALSE(limiter.try_acquire(2)) << "only one is left; a refusal takes nothing";
  EXPECT_EQ(limiter.available_permits(), 1);
  EXPECT_TRUE(limiter.try_acquire(1));
  EXPECT_EQ(limiter.available_permits(), 0);
}

TEST(RateLimiter, RefusedThenAdmittedAgainAfterTheInterval) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(2, 500ms));
  ASSERT_TRUE(limiter.try_acquire(2));
  const long long first = last_admission(client, "api");
  EXPECT_FALSE(limiter.try_acquire());
  EXPECT_EQ(last_admission(client, "api"), first) << "a refusal writes nothing";
  ASSERT_TRUE(eventually([&] { return limiter.try_acquire(2); }, 20s));
  EXPECT_GE(last_admission(client, "api") - first, 500'000)
      << "a full burst again only after the interval";
}

TEST(RateLimiter, TryAcquireForWaitsExactlyUntilThePermitIsDue) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(1, 1000ms));
  ASSERT_TRUE(limiter.try_acquire());
  const long long first = last_admission(client, "api");
  const long long calls = test::evalsha_calls(client);
  ASSERT_TRUE(limiter.try_acquire_for(1, 20s));
  const long long waited = last_admission(client, "api") - first;
  EXPECT_GE(waited, 1'000'000) << "not before it is due";
  // Slept the server's wait and no more or less: one refused attempt that
  // said how long, and one after that long which was admitted (a poller
  // would make many; a sleep too short, three).
  EXPECT_EQ(test::evalsha_calls(client) - calls, 2);
}

TEST(RateLimiter, TryAcquireForGivesUpAtOnceWhenThePermitIsDueAfterTheWait) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(1, std::chrono::hours(1)));
  ASSERT_TRUE(limiter.try_acquire());
  const long long first = last_admission(client, "api");
  const long long calls = test::evalsha_calls(client);
  EXPECT_FALSE(limiter.try_acquire_for(1, 10s));
  // One attempt, and no last one at the deadline: it gave up at once.
  EXPECT_EQ(test::evalsha_calls(client) - calls, 1);
  EXPECT_EQ(last_admission(client, "api"), first) << "nothing taken";
}

TEST(RateLimiter, AcquireSleepsUntilThePermitIsDue) {
  RedisServer server;
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter("api");
  ASSERT_TRUE(limiter.try_set_rate(4, 800ms));
  ASSERT_TRUE(limiter.try_acquire(4));
  const long long first = last_admission(client, "api");
  auto done = std::async(std::launch::async, [&] { limiter.acquire(2); });
  ASSERT_EQ(done.wait_for(30s), std::future_status::ready);
  done.get();
  EXPECT_GE(last_admission(client, "api") - first, 400'000) << "two permits take half the interval";
}

// Runs 4 worker processes x 2 threads on the limiter `name` (rate per
// interval) for `duration`, after draining its burst; returns the admissions
// per window of `interval` on the server's clock, windows starting half an
// emission interval after the drain (so each holds exactly `rate` due times).
std::vector<int> hammer(const RedisServer& server,
                        const std::string& name,
                        std::int64_t rate,
                        std::chrono::milliseconds interval,
                        std::chrono::milliseconds duration) {
  Client client(options_for(server));
  RateLimiter limiter = client.rate_limiter(name);
  EXPECT_TRUE(limiter.try_set_rate(rate, interval));
  std::vector<test::ChildProcess> workers;
  for (int i = 0; i < 4; ++i) {
    workers.push_back(test::ChildProcess::spawn({DISTLOCK_LOCK_WORKER, "rate-hammer", server.uri(),
                                                 name, std::to_string(duration.count())}));
  }
  EXPECT_TRUE(eventually(
      [&] { return client.command("INCRBY", name + ":ready", 0).as_integer() == 4; }, 30s));
  EXPECT_TRUE(limiter.try_acquire(rate)) << "a fresh limiter gives its burst";
  const long long drained = last_admission(client, name);
  client.command("SET", name + ":go", "1");
  for (auto& w : workers) {
    const auto status = w.wait_for_exit(duration + 30s);
    EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  }
  const long long interval_us = interval.count() * 1000;
  const long long start = drained + interval_us / rate / 2;
  const long long end = server_time(client);
  std::vector<int> counts(static_cast<std::size_t>((end - start) / interval_us), 0);
  const Value admitted = client.command("LRANGE", name + ":admitted", 0, -1);
  for (const auto& v : admitted.as_array()) {
    const long long at = std::stoll(v.as_string());
    if (at < start) {
      ADD_FAILURE() << "an admission before the first permit was due";
      continue;
    }
    const auto w = static_cast<std::size_t>((at - start) / interval_us);
    if (w < counts.size()) ++counts[w];
  }
  std::string shown;
  for (int c : counts) shown += " " + std::to_string(c);
  std::printf("rate %lld per %lld ms, admitted per window:%s\n", static_cast<long long>(rate),
              static_cast<long long>(interval.count()), shown.c_str());
  return counts;
}

// The admissions recorded in the first `windows` windows together. The
// windows hold exactly windows x rate due times (hammer), nothing is ever
// admitted before it is due, and each admission is recorded after it
// happened: a limiter that admits the rate can record no more than that in
// them, and misses at most the last admission, recorded after the end.
// (One window alone may hold rate + 1: an admission recorded late moves to
// the next window.)
void expect_exactly_the_rate_over(const std::vector<int>& counts,
                                  std::size_t windows,
                                  std::int64_t rate) {
  ASSERT_GE(counts.size(), windows);
  long long total = 0;
  for (std::size_t w = 0; w < windows; ++w) total += counts[w];
  const long long due = static_cast<long long>(windows) * rate;
  EXPECT_LE(total, due) << "admitted more than the rate over " << windows << " window(s)";
  EXPECT_GE(total, due - 1) << "admitted less than the rate over " << windows << " window(s)";
}

TEST(RateLimiter, FourProcessesTimesTwoThreadsAdmitTheRatePlusMinusOneOverOneLongWindow) {
  RedisServer server;
  const auto counts = hammer(server, "long", 20, 4000ms, 4600ms);
  ASSERT_GE(counts.size(), 1u);
  // The hammer ran through the whole first window.
  EXPECT_NEAR(counts[0], 20, 1);
  expect_exactly_the_rate_over(counts, 1, 20);
}

TEST(RateLimiter, FourProcessesTimesTwoThreadsAdmitTheRatePlusMinusOneInEveryShortWindow) {
  RedisServer server;
  const auto counts = hammer(server, "short", 10, 400ms, 3000ms);
  // Windows the hammer ran through from start to end (the last may be cut).
  ASSERT_GE(counts.size(), 6u);
  for (std::size_t w = 0; w < 6; ++w) EXPECT_NEAR(counts[w], 10, 1) << "window " << w;
  // An extra admission now and then fits in every window's +-1; not in the
  // total.
  expect_exactly_the_rate_over(counts, 6, 10);
}

}  // namespace
}  // namespace distlock
