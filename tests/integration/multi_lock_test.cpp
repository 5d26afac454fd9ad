// MultiLock against real redis-server processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/history.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

bool exists(Client& client, const std::string& key) {
  return client.command("EXISTS", key).as_integer() == 1;
}

std::int64_t subscribers(Client& client, const std::string& name) {
  const Value reply = client.command("PUBSUB", "NUMSUB", "redisson_lock__channel:{" + name + "}");
  return reply.as_array().at(1).as_integer();
}

// Runs `f` on another thread and returns its result.
template <class F>
auto on_other_thread(F f) {
  return std::async(std::launch::async, std::move(f)).get();
}

TEST(MultiLock, LockHoldsEveryPartAndUnlockFreesThemAll) {
  RedisServer server;
  Client client(options_for(server));
  MultiLock multi({client.lock("a"), client.lock("b"), client.lock("c")});
  multi.lock();
  for (const char* name : {"a", "b", "c"}) EXPECT_TRUE(exists(client, name)) << name;
  EXPECT_TRUE(multi.lease_valid());
  multi.unlock();
  for (const char* name : {"a", "b", "c"}) EXPECT_FALSE(exists(client, name)) << name;
}

TEST(MultiLock, OnePartHeldElsewhereFailsTryLockAndLeavesNoKey) {
  RedisServer server;
  Client client(options_for(server));
  Client other(options_for(server));
  Lock held = other.lock("b");
  on_other_thread([&] { held.lock(); });
  // "a" is taken before "b" in canonical order, so it must be given back.
  MultiLock multi({client.lock("c"), client.lock("b"), client.lock("a")});
  std::error_code ec;
  EXPECT_FALSE(multi.try_lock(ec));
  EXPECT_FALSE(ec);
  EXPECT_FALSE(exists(client, "a")) << "the part taken before the held one was not released";
  EXPECT_FALSE(exists(client, "c"));
  EXPECT_TRUE(exists(client, "b")) << "the other owner's hold must stay";
  EXPECT_FALSE(multi.lease_valid());
}

TEST(MultiLock, OnePartHeldElsewhereFailsTryLockForAfterTheWaitAndLeavesNoKey) {
  RedisServer server;
  Client client(options_for(server));
  Client other(options_for(server));
  Lock held = other.lock("b");
  on_other_thread([&] { held.lock(); });
  MultiLock multi({client.lock("a"), client.lock("b"), client.lock("c")});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(multi.try_lock_for(200ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms) << "gave up before the wait";
  EXPECT_FALSE(exists(client, "a"));
  EXPECT_FALSE(exists(client, "c"));
}

TEST(MultiLock, PartsFromSeveralClientsOnSeveralServersAreAllHeld) {
  RedisServer first_server;
  RedisServer second_server;
  Client first(options_for(first_server));
  Client second(options_for(second_server));
  Client third(options_for(first_server));
  MultiLock multi({second.lock("x"), first.lock("x"), third.lock("y")});
  multi.lock();
  EXPECT_TRUE(exists(first, "x"));
  EXPECT_TRUE(exists(second, "x"));
  EXPECT_TRUE(exists(first, "y"));
  Client outsider(options_for(second_server));
  Lock x = outsider.lock("x");
  EXPECT_FALSE(on_other_thread([&] { return x.try_lock(); }));
  std::error_code ec;
  multi.unlock(ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_FALSE(exists(first, "x"));
  EXPECT_FALSE(exists(second, "x"));
  EXPECT_FALSE(exists(first, "y"));
}

TEST(MultiLock, ASecondMultiLockOnTheSameNamesWaitsAndGetsIn) {
  RedisServer server;
  Client client(options_for(server));
  Client other(options_for(server));
  MultiLock holder({client.lock("a"), client.lock("b")});
  MultiLock waiter({other.lock("b"), other.lock("a")});
  holder.lock();
  auto got = std::async(std::launch::async, [&] {
    waiter.lock();
    const bool held = exists(other, "a") && exists(other, "b") && waiter.lease_valid();
    waiter.unlock();
    return held;
  });
  ASSERT_TRUE(eventually([&] { return subscribers(client, "a") > 0; }, 10s))
      << "the second multi-lock never started waiting for the first part";
  EXPECT_NE(got.wait_for(0s), std::future_status::ready);
  holder.unlock();
  ASSERT_EQ(got.wait_for(30s), std::future_status::ready) << "the waiter never got in";
  EXPECT_TRUE(got.get());
}

TEST(MultiLock, AStolenPartIsReportedAndTheOtherPartsAreStillFreed) {
  RedisServer server;
  Client client(options_for(server));
  Client admin(options_for(server));
  MultiLock multi({client.lock("a"), client.lock("b"), client.lock("c")});
  multi.lock();
  // As if b's lease had run out: the key goes, and another owner takes it.
  admin.command("DEL", "b");
  Lock thief = admin.lock("b");
  auto thief_holds = std::async(std::launch::async, [&] { return thief.try_lock(); });
  ASSERT_TRUE(thief_holds.get());
  std::error_code ec;
  multi.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
  EXPECT_FALSE(exists(admin, "a")) << "unlock stopped at the stolen part";
  EXPECT_FALSE(exists(admin, "c"));
  EXPECT_TRUE(exists(admin, "b")) << "the thief's hold must not be deleted";
}

TEST(MultiLock, AServerDownMidAcquireFailsAndReleasesThePartsOnOtherServers) {
  RedisServer up_server;
  RedisServer down_server;
  ClientOptions down_options = options_for(down_server);
  down_options.command_timeout = 500ms;
  Client up(options_for(up_server));
  Client down(down_options);
  MultiLock multi({down.lock("b"), up.lock("a")});  // canonical: a (up) then b (down)
  down_server.kill();
  std::error_code ec;
  EXPECT_FALSE(multi.try_lock_for(2s, ec));
  EXPECT_TRUE(ec == errc::connection_lost || ec == errc::timeout) << ec.message();
  EXPECT_FALSE(exists(up, "a")) << "the part on the live server was left behind";
  EXPECT_THROW(multi.lock(), Error);
  EXPECT_FALSE(exists(up, "a"));
}

TEST(MultiLock, FixedLeasePartsExpireWithoutUnlock) {
  RedisServer server;
  Client client(options_for(server));
  MultiLock multi({client.lock("a"), client.lock("b")});
  multi.lock(300ms);
  const auto pttl = client.command("PTTL", "a").as_integer();
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, 300);
  EXPECT_TRUE(eventually([&] { return !exists(client, "a") && !exists(client, "b"); }, 10s));
  std::error_code ec;
  multi.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
}

// With a fixed lease the first part may run out while a later one is
// awaited: the multi-lock must not then report holding a part it lost.
TEST(MultiLock, AFixedLeaseThatEndsWhileALaterPartIsAwaitedIsTakenAgain) {
  RedisServer server;
  Client client(options_for(server));
  Client other(options_for(server));
  Lock held = other.lock("b");
  on_other_thread([&] { held.lock(1500ms); });  // b frees itself 1.5 s from now
  MultiLock multi({client.lock("a"), client.lock("b")});
  ASSERT_TRUE(multi.try_lock_for(20s, 300ms));  // a (300 ms) ends while b is awaited
  EXPECT_TRUE(multi.lease_valid());
  EXPECT_TRUE(exists(client, "a")) << "reported held with a part whose lease had ended";
  EXPECT_TRUE(exists(client, "b"));
  multi.unlock();
}

TEST(MultiLock, AnotherThreadIsNotTheOwnerAndChangesNothing) {
  RedisServer server;
  Client client(options_for(server));
  MultiLock multi({client.lock("a"), client.lock("b")});
  multi.lock();
  const std::error_code ec = on_other_thread([&] {
    std::error_code e;
    multi.unlock(e);
    return e;
  });
  EXPECT_EQ(ec, errc::not_owner);
  EXPECT_TRUE(exists(client, "a"));
  EXPECT_TRUE(exists(client, "b"));
  multi.unlock();
}

TEST(MultiLock, WorksWithScopedLockAndUniqueLock) {
  RedisServer server;
  Client client(options_for(server));
  MultiLock multi({client.lock("a"), client.lock("b")});
  {
    std::scoped_lock guard(multi);
    EXPECT_TRUE(exists(client, "a"));
  }
  EXPECT_FALSE(exists(client, "a"));
  {
    std::unique_lock guard(multi, std::defer_lock);
    ASSERT_TRUE(guard.try_lock_until(std::chrono::system_clock::now() + 5s));
    EXPECT_TRUE(exists(client, "b"));
  }
  EXPECT_FALSE(exists(client, "b"));
}

TEST(MultiLock, PartsAreInTheSameCanonicalOrderWhateverTheOrderListed) {
  RedisServer first_server;
  RedisServer second_server;
  Client first(options_for(first_server));
  Client second(options_for(second_server));
  MultiLock one({second.lock("n"), first.lock("m"), first.lock("n")});
  MultiLock two({first.lock("n"), second.lock("n"), first.lock("m")});
  ASSERT_EQ(one.parts().size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(one.parts()[i].name(), two.parts()[i].name());
    EXPECT_EQ(distlock::detail::Access::services(one.parts()[i]),
              distlock::detail::Access::services(two.parts()[i]))
        << "part " << i;
  }
  EXPECT_EQ(one.parts()[0].name(), "m");
}

// Each thread repeatedly locks a random subset of six names on two servers,
// listed in a random order; every hold of every name is recorded and the
// checker proves no two threads held one name at once. Inside each hold, a
// non-atomic read-modify-write of a plain counter per name, with a pause
// between the read and the write, is a witness too: two holders of a name
// inside at once lose an increment. A cycle of waits would stop the
// threads: the bound then closes the Clients to free them.
TEST(MultiLock, OverlappingMultiLocksInAnyOrderNeverDeadlockNorOverlap) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 40;
  RedisServer first_server;
  RedisServer second_server;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(
        std::make_unique<Client>(options_for(i % 2 == 0 ? first_server : second_server)));
  }
  std::mutex records_mutex;
  std::vector<test::HoldRecord> records;
  std::atomic<int> failures{0};
  // Read and written as plain values (relaxed loads and stores, no RMW).
  std::map<std::string, std::atomic<int>> counters;
  for (int i = 0; i < 6; ++i) counters["r" + std::to_string(i % 3) + "@" + std::to_string(i / 3)];
  std::vector<std::future<void>> done;
  for (int t = 0; t < kThreads; ++t) {
    done.push_back(std::async(std::launch::async, [&, t] {
      std::mt19937 rng(static_cast<unsigned>(t) * 7919u + 1u);
      std::vector<std::pair<std::string, int>> all;  // name, server (0 / 1)
      for (int i = 0; i < 6; ++i) all.emplace_back("r" + std::to_string(i % 3), i / 3);
      for (int round = 0; round < kRounds; ++round) {
        std::shuffle(all.begin(), all.end(), rng);
        const std::size_t n = 2 + rng() % 3;
        std::vector<Lock> parts;
        std::vector<std::string> keys;
        for (std::size_t i = 0; i < n; ++i) {
          // Either Client of the part's server: a different owner per Client.
          Client& c = *clients[static_cast<std::size_t>(all[i].second + 2 * ((t + round) % 2))];
          parts.push_back(c.lock(all[i].first));
          keys.push_back(all[i].first + "@" + std::to_string(all[i].second));
        }
        MultiLock multi(std::move(parts));
        std::error_code ec;
        multi.lock(ec);
        if (ec) {
          ++failures;
          return;
        }
        const auto enter = test::steady_now_ns();
        std::vector<int> seen;
        for (const auto& key : keys)
          seen.push_back(counters.at(key).load(std::memory_order_relaxed));
        std::this_thread::sleep_for(100us);
        for (std::size_t i = 0; i < keys.size(); ++i) {
          counters.at(keys[i]).store(seen[i] + 1, std::memory_order_relaxed);
        }
        const auto exit = test::steady_now_ns();
        multi.unlock(ec);
        if (ec) ++failures;
        std::lock_guard guard(records_mutex);
        for (const auto& key : keys) records.push_back({key, 0, t, enter, exit, {}});
      }
    }));
  }
  bool finished = true;
  for (auto& f : done) finished = finished && f.wait_for(120s) == std::future_status::ready;
  if (!finished) {
    for (auto& c : clients) c->close();  // fails the stuck lock() calls with closed
  }
  for (auto& f : done) f.get();
  ASSERT_TRUE(finished) << "multi-locks deadlocked";
  EXPECT_EQ(failures.load(), 0);
  const auto result = test::check_mutual_exclusion(records);
  EXPECT_TRUE(result.ok()) << result.report();
  EXPECT_EQ(result.operations_checked, records.size());
  EXPECT_GE(records.size(), static_cast<std::size_t>(kThreads * kRounds * 2));
  std::map<std::string, int> holds;
  for (const auto& r : records) ++holds[r.name];
  for (const auto& [key, count] : holds) {
    EXPECT_EQ(counters.at(key).load(), count)
        << key << ": increments were lost, holders overlapped";
  }
}

// Bad input: every call below is rejected before anything is sent.
TEST(MultiLock, AnEmptyListOfPartsIsInvalidArgument) {
  try {
    MultiLock multi({});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("at least one part"), std::string::npos) << e.what();
  }
}

TEST(MultiLock, TheSameLockListedTwiceIsInvalidArgument) {
  RedisServer server;
  Client client(options_for(server));
  Client same_server(options_for(server));
  for (auto parts : {std::vector<Lock>{client.lock("a"), client.lock("a")},
                     std::vector<Lock>{client.lock("a"), same_server.fenced_lock("a")}}) {
    try {
      MultiLock multi(parts);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos) << e.what();
    }
  }
}

TEST(MultiLock, NegativeWaitsAndNonPositiveLeasesAreInvalidArgumentAndTakeNothing) {
  RedisServer server;
  Client client(options_for(server));
  MultiLock multi({client.lock("a"), client.lock("b")});
  EXPECT_THROW(multi.try_lock_for(-1ms), Error);
  EXPECT_THROW(multi.try_lock_for(5ms, 0ms), Error);
  EXPECT_THROW(multi.try_lock_for(5ms, -1ms), Error);
  EXPECT_THROW(multi.lock(0ms), Error);
  EXPECT_THROW(multi.lock(-5ms), Error);
  std::error_code ec;
  EXPECT_FALSE(multi.try_lock_for(-1ms, ec));
  EXPECT_EQ(ec, errc::invalid_argument);
  EXPECT_FALSE(multi.try_lock_for(1ms, 0ms, ec));
  EXPECT_EQ(ec, errc::invalid_argument);
  multi.lock(-1ms, ec);
  EXPECT_EQ(ec, errc::invalid_argument);
  try {
    multi.lock(0ms);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("lease must be positive"), std::string::npos);
  }
  EXPECT_EQ(client.command("DBSIZE").as_integer(), 0) << "a rejected call changed the server";
}

TEST(MultiLock, UnlockWithoutHoldingIsNotOwnerAndChangesNothing) {
  RedisServer server;
  Client client(options_for(server));
  Client other(options_for(server));
  Lock held = other.lock("b");
  on_other_thread([&] { held.lock(); });
  MultiLock multi({client.lock("a"), client.lock("b")});
  std::error_code ec;
  multi.unlock(ec);
  EXPECT_EQ(ec, errc::not_owner);
  multi.unlock();  // never throws
  EXPECT_TRUE(exists(client, "b"));
  EXPECT_EQ(client.command("DBSIZE").as_integer(), 1);
}

}  // namespace
}  // namespace distlock
