// Coalescing (issue 26) against real redis-server processes: calls of one
// Client made while one of its calls to the same server is in flight go out
// as one batch call, and each operation keeps its own reply, error, lease and
// token. A paused server (SIGSTOP) holds the first call in flight, so the
// calls made meanwhile wait by construction, not by timing.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client_impl.hpp"
#include "distlock/distlock.hpp"
#include "integration/async_helpers.hpp"
#include "script/batch.hpp"
#include "script/scripts.hpp"
#include "support/history.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"
#include "topology/coalescer.hpp"
#include "topology/topology.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::error_of;
using test::eventually;
using test::options_for;
using test::RedisServer;

// Script calls the server ran (EVALSHA and EVAL, INFO commandstats).
long long script_calls(Client& admin) {
  const std::string stats = admin.command("INFO", "commandstats").as_string();
  long long n = 0;
  for (const std::string field : {"cmdstat_evalsha:calls=", "cmdstat_eval:calls="}) {
    const auto at = stats.find(field);
    if (at != std::string::npos) n += std::stoll(stats.substr(at + field.size()));
  }
  return n;
}

// Options for a Client of `server` with coalescing on (off by default).
ClientOptions coalescing(const RedisServer& server) {
  ClientOptions o = options_for(server);
  o.coalesce = true;
  return o;
}

// Calls waiting in the Client's coalescer behind the call in flight to the
// server that serves `key`.
std::size_t waiting(Client& client, std::string_view key) {
  auto* c = detail::Access::impl(client)->topology().coalescer();
  return c == nullptr ? 0 : c->waiting(key);
}

// The batch script run by hand: three acquires, answered as three calls of
// acquire.lua would be: nil (acquired), WRONGTYPE for that one alone, and the
// holder's PTTL; a failed operation does not stop the ones after it.
TEST(Coalescing, TheBatchScriptAnswersEachOperationAsItsOwnCallWould) {
  RedisServer server;
  Client admin(options_for(server));
  admin.command("SET", "str", "x");
  admin.command("HSET", "held", "other-owner", "1");
  admin.command("PEXPIRE", "held", "60000");
  const script::Script& batch = script::batch_script(script::BatchClass::plain);
  const std::string f = std::to_string(script::batch_info(script::scripts().acquire).index);
  const Value r =
      admin.command("EVAL", batch.source, "3", "fresh", "str", "held", "3", f, "1", "2", f, "1",
                    "2", f, "1", "2", "30000", "me", "30000", "me", "30000", "me");
  ASSERT_TRUE(r.is_array());
  ASSERT_EQ(r.as_array().size(), 3u);
  EXPECT_TRUE(r.as_array()[0].is_nil());
  ASSERT_TRUE(r.as_array()[1].is_error());
  EXPECT_NE(r.as_array()[1].as_string().find("WRONGTYPE"), std::string::npos);
  ASSERT_TRUE(r.as_array()[2].is_integer());
  EXPECT_GT(r.as_array()[2].as_integer(), 0);
  EXPECT_EQ(admin.command("HGET", "fresh", "me").as_string(), "1");
}

TEST(Coalescing, CallsMadeWhileOneIsInFlightGoOutAsOneBatchEachWithItsOwnHolding) {
  RedisServer server;
  Client admin(options_for(server));
  Client client(coalescing(server));
  const long long before = script_calls(admin);
  constexpr int kLocks = 12;
  server.pause();
  // The first acquire goes out at once and stays in flight on the paused
  // server; the others wait behind it in the coalescer.
  std::vector<std::future<Lease>> leases;
  for (int i = 0; i < kLocks; ++i) {
    leases.push_back(client.lock("co-" + std::to_string(i)).async_acquire(asio::use_future));
  }
  EXPECT_EQ(waiting(client, "co-0"), static_cast<std::size_t>(kLocks - 1));
  server.resume();
  std::vector<Lease> held;
  std::set<std::string> owners;
  for (int i = 0; i < kLocks; ++i) {
    ASSERT_EQ(leases[i].wait_for(30s), std::future_status::ready);
    held.push_back(leases[i].get());
    ASSERT_TRUE(held.back().valid());
    const Value fields = admin.command("HKEYS", "co-" + std::to_string(i));
    ASSERT_EQ(fields.as_array().size(), 1u) << "co-" << i << " holds one owner";
    owners.insert(fields.as_array()[0].as_string());
  }
  EXPECT_EQ(owners.size(), static_cast<std::size_t>(kLocks)) << "each holding its own token";
  const MetricsSnapshot m = client.metrics();
  EXPECT_EQ(m.script_batches.count, 2u) << "the first acquire, then one batch";
  EXPECT_EQ(m.script_batches.sum, static_cast<std::uint64_t>(kLocks));
  // The server ran fewer script calls than operations (the batch's first
  // EVALSHA may meet NOSCRIPT and be repeated as EVAL).
  EXPECT_LE(script_calls(admin) - before, 3);
  EXPECT_EQ(client.metrics().of(MetricPrimitive::lock).acquires_of(AcquireResult::acquired),
            static_cast<std::uint64_t>(kLocks))
      << "metrics count operations, not calls";
  // Releases batch too, and each answers for its own holding.
  server.pause();
  std::vector<std::future<void>> released;
  for (auto& l : held) released.push_back(l.async_release(asio::use_future));
  server.resume();
  for (auto& f : released) {
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    EXPECT_FALSE(error_of(f));
  }
  for (int i = 0; i < kLocks; ++i) {
    EXPECT_EQ(admin.command("EXISTS", "co-" + std::to_string(i)).as_integer(), 0);
  }
  EXPECT_EQ(client.metrics().script_batches.count, 4u);
}

TEST(Coalescing, ALongWaitGoesOutInBatchesOfAtMostTheirLimit) {
  RedisServer server;
  Client client(coalescing(server));
  constexpr int kLocks = 1 + 300;  // the first, then 256 + 44
  server.pause();
  std::vector<std::future<Lease>> leases;
  for (int i = 0; i < kLocks; ++i) {
    leases.push_back(client.lock("many-" + std::to_string(i)).async_acquire(asio::use_future));
  }
  EXPECT_EQ(waiting(client, "many-0"), static_cast<std::size_t>(kLocks - 1));
  server.resume();
  std::vector<Lease> held;
  for (auto& f : leases) {
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    held.push_back(f.get());
    EXPECT_TRUE(held.back().valid());
  }
  const BatchSizeSnapshot b = client.metrics().script_batches;
  EXPECT_EQ(b.count, 3u);
  EXPECT_EQ(b.sum, static_cast<std::uint64_t>(kLocks));
  EXPECT_EQ(b.buckets[0], 1u) << "the first alone";
  EXPECT_EQ(b.buckets[BatchSizeSnapshot::kBounds.size() - 1], 3u) << "none over 256";
  static_assert(topology::Coalescer::kMaxBatch == 256);
}

TEST(Coalescing, AnErrorInOneOperationOfABatchFailsThatOperationOnly) {
  RedisServer server;
  Client admin(options_for(server));
  Client client(coalescing(server));
  admin.command("SET", "wrong-type", "a string, not a lock hash");
  server.pause();
  auto first = client.lock("ok-0").async_acquire(asio::use_future);
  auto a = client.lock("ok-1").async_acquire(asio::use_future);
  auto bad = client.lock("wrong-type").async_acquire(asio::use_future);
  auto b = client.lock("ok-2").async_acquire(asio::use_future);
  ASSERT_EQ(waiting(client, "ok-1"), 3u) << "the three wait behind the first: one batch";
  server.resume();
  std::vector<Lease> held;
  for (auto* f : {&first, &a, &b}) {
    ASSERT_EQ(f->wait_for(30s), std::future_status::ready);
    held.push_back(f->get());
    EXPECT_TRUE(held.back().valid());
  }
  ASSERT_EQ(bad.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(error_of(bad), make_error_code(errc::server_error));
  EXPECT_EQ(admin.command("GET", "wrong-type").as_string(), "a string, not a lock hash");
  EXPECT_EQ(client.metrics().script_batches.count, 2u);
}

TEST(Coalescing, OffByDefaultAndOffSendsOneCallPerOperation) {
  RedisServer server;
  EXPECT_FALSE(ClientOptions::from_uri(server.uri()).coalesce) << "off by default";
  EXPECT_TRUE(ClientOptions::from_uri(server.uri() + "?coalesce=true").coalesce);
  ClientOptions o = ClientOptions::from_uri(server.uri() + "?coalesce=false");
  EXPECT_FALSE(o.coalesce);
  Client client(o);
  server.pause();
  std::vector<std::future<Lease>> leases;
  for (int i = 0; i < 4; ++i) {
    leases.push_back(client.lock("off-" + std::to_string(i)).async_acquire(asio::use_future));
  }
  EXPECT_EQ(waiting(client, "off-0"), 0u);
  server.resume();
  for (auto& f : leases) {
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    EXPECT_TRUE(f.get().valid());
  }
  EXPECT_EQ(client.metrics().script_batches.count, 0u) << "no coalescer, nothing counted";
}

TEST(Coalescing, ReplicaAcknowledgementWaitsAfterTheBatch) {
  RedisServer primary;
  RedisServer replica;
  Client admin(options_for(primary));
  {
    Client r(options_for(replica));
    r.command("REPLICAOF", "127.0.0.1", std::to_string(primary.port()));
    ASSERT_TRUE(eventually(
        [&] {
          return r.command("INFO", "replication").as_string().find("master_link_status:up") !=
                 std::string::npos;
        },
        30s));
  }
  ClientOptions o = options_for(primary);
  o.coalesce = true;
  o.min_replicas_acked = 1;
  Client client(o);
  primary.pause();
  std::vector<std::future<Lease>> leases;
  for (int i = 0; i < 6; ++i) {
    leases.push_back(client.lock("ack-" + std::to_string(i)).async_acquire(asio::use_future));
  }
  EXPECT_EQ(waiting(client, "ack-0"), 5u);
  primary.resume();
  std::vector<Lease> held;
  for (auto& f : leases) {
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    held.push_back(f.get());
    EXPECT_TRUE(held.back().valid()) << "acknowledged by the replica";
  }
  EXPECT_EQ(client.metrics().script_batches.count, 2u);
  const std::string stats = admin.command("INFO", "commandstats").as_string();
  const auto at = stats.find("cmdstat_wait:calls=");
  ASSERT_NE(at, std::string::npos);
  EXPECT_GE(std::stoll(stats.substr(at + 19)), 2) << "a WAIT behind each call";
}

// 64 threads on one Client, each taking and releasing locks of 8 names: the
// first round is held back until 63 calls wait (so at least one batch goes
// out), and the history shows no two holders of a name inside at once.
TEST(Coalescing, SixtyFourThreadsOnDistinctLocksBatchAndNeverOverlap) {
  RedisServer server;
  Client admin(options_for(server));
  Client client(coalescing(server));
  constexpr int kThreads = 64;
  constexpr int kRounds = 30;
  const long long before = script_calls(admin);
  std::mutex m;
  std::vector<test::HoldRecord> records;
  server.pause();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const std::string name = "mx-" + std::to_string((t + r) % 8);
        Lease l = client.lock(name).acquire();
        test::HoldRecord rec;
        rec.name = name;
        rec.thread = t;
        rec.enter_ns = test::steady_now_ns();
        rec.lease_deadline_ns = test::steady_ns(l.deadline());
        rec.exit_ns = test::steady_now_ns();
        l.release();
        std::lock_guard lock(m);
        records.push_back(rec);
      }
    });
  }
  ASSERT_TRUE(eventually([&] { return waiting(client, "mx-0") == kThreads - 1; }, 30s));
  server.resume();
  for (auto& t : threads) t.join();
  const auto result = test::check_mutual_exclusion(records);
  EXPECT_TRUE(result.ok()) << result.report();
  const MetricsSnapshot s = client.metrics();
  EXPECT_LT(s.script_batches.count, s.script_batches.sum) << "calls < operations";
  EXPECT_GE(s.script_batches.sum, static_cast<std::uint64_t>(2 * kThreads * kRounds));
  // The server ran fewer script calls than the operations sent (contended
  // acquires make more than one attempt each: the operations are counted by
  // the Client, the calls by the server).
  EXPECT_LT(script_calls(admin) - before, static_cast<long long>(s.script_batches.sum))
      << "server: calls < operations";
}

TEST(Coalescing, SixtyFourThreadsOnOneSemaphoreNeverHoldMoreThanItsPermits) {
  RedisServer server;
  Client client(coalescing(server));
  constexpr int kThreads = 64;
  constexpr int kPermits = 8;
  constexpr int kRounds = 20;
  Semaphore setup = client.semaphore("co-sem");
  ASSERT_TRUE(setup.try_set_permits(kPermits));
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  server.pause();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Semaphore sem = client.semaphore("co-sem");
      for (int r = 0; r < kRounds; ++r) {
        Permit p = sem.acquire_permit(1);
        const int now = inside.fetch_add(1) + 1;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        inside.fetch_sub(1);
        p.release();
      }
    });
  }
  ASSERT_TRUE(eventually([&] { return waiting(client, "co-sem") == kThreads - 1; }, 30s));
  server.resume();
  for (auto& t : threads) t.join();
  EXPECT_LE(most.load(), kPermits);
  EXPECT_GE(most.load(), 1);
  EXPECT_EQ(setup.available_permits(), kPermits) << "every permit came back";
  const MetricsSnapshot s = client.metrics();
  EXPECT_LT(s.script_batches.count, s.script_batches.sum);
}

TEST(Coalescing, SixtyFourThreadsOnOneRateLimiterAdmitExactlyTheRate) {
  RedisServer server;
  Client client(coalescing(server));
  constexpr int kThreads = 64;
  constexpr int kRate = 100;
  RateLimiter setup = client.rate_limiter("co-rate");
  ASSERT_TRUE(setup.try_set_rate(kRate, std::chrono::hours(1)));
  std::atomic<int> admitted{0};
  server.pause();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      RateLimiter limiter = client.rate_limiter("co-rate");
      for (int r = 0; r < 4; ++r) {
        if (limiter.try_acquire(1)) admitted.fetch_add(1);
      }
    });
  }
  ASSERT_TRUE(eventually([&] { return waiting(client, "co-rate") == kThreads - 1; }, 30s));
  server.resume();
  for (auto& t : threads) t.join();
  EXPECT_EQ(admitted.load(), kRate) << "256 tries of a rate of 100 per hour";
  const MetricsSnapshot s = client.metrics();
  EXPECT_LT(s.script_batches.count, s.script_batches.sum);
}

}  // namespace
}  // namespace distlock
