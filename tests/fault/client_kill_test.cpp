// The server closes a Client's connections (CLIENT KILL) while threads wait
// for a lock and another Client holds it.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using Clock = std::chrono::steady_clock;
using test::HoldRecord;
using test::RedisServer;

constexpr int kWaiters = 8;

// The holds of one test, appended from many threads.
class Holds {
 public:
  void add(HoldRecord r) {
    std::lock_guard lock(mutex_);
    records_.push_back(std::move(r));
  }
  std::vector<HoldRecord> records() {
    std::lock_guard lock(mutex_);
    return records_;
  }

 private:
  std::mutex mutex_;
  std::vector<HoldRecord> records_;
};

// The critical section: a non-atomic increment of `counter` (GET, then SET
// n+1), two round trips during which another holder, were the lock broken,
// would be inside too (an overlap for the checker, a lost increment for the
// counter). Returns false when a command failed.
bool increment(Client& client, const std::string& counter) {
  std::error_code ec;
  const std::string_view get[] = {"GET", counter};
  const Value v = client.command(get, ec);
  if (ec) return false;
  const std::string next = std::to_string((v.is_nil() ? 0 : std::stoll(v.as_string())) + 1);
  const std::string_view set[] = {"SET", counter, next};
  client.command(set, ec);
  return !ec;
}

long long counter_value(const RedisServer& server, const std::string& counter) {
  const std::string v = server.cli({"GET", counter});
  return v.empty() ? 0 : std::stoll(v);
}

std::string connection_id(const RedisServer& server, const std::string& name, bool pubsub) {
  for (const auto& c : connections_named(server, name)) {
    if (c.pubsub == pubsub) return c.id;
  }
  return {};
}

TEST(ClientKill, OfTheDataConnectionsLeavesWaitersWaitingAndTheLeaseRenewedAndEveryWaiterAcquires) {
  RedisServer server;
  Client holder(options_for(server, 30s, "holder"));
  Client waiter(options_for(server, 30s, "waiter"));
  const std::string name = "killed-data";
  const std::string counter = "counter:" + name;
  Lease held = holder.lock(name).acquire();
  HoldRecord held_record = entering(name, 0, std::nullopt);

  // Each thread starts an acquire, then blocks until it completes. The async
  // start means the first attempt is queued before the thread counts down,
  // so the test knows when every waiter has asked.
  Holds holds;
  std::latch asked(kWaiters);
  std::atomic<int> acquired{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  Lock lock = waiter.lock(name);
  for (int t = 0; t < kWaiters; ++t) {
    threads.emplace_back([&, t] {
      auto pending = lock.async_acquire(asio::use_future);
      asked.count_down();
      if (pending.wait_for(30s) != std::future_status::ready) {
        ++failed;
        return;
      }
      try {
        Lease lease = pending.get();
        HoldRecord r = entering(name, 1, std::nullopt, t);
        ++acquired;
        if (!increment(waiter, counter)) ADD_FAILURE() << "waiter " << t << ": increment failed";
        r.exit_ns = test::steady_now_ns();  // just before the release
        holds.add(r);
        std::error_code ec;
        lease.release(ec);
        if (ec) ADD_FAILURE() << "waiter " << t << ": release: " << ec.message();
      } catch (const std::exception& e) {
        ADD_FAILURE() << "waiter " << t << ": " << e.what();
        ++failed;
      }
    });
  }
  asked.wait();
  // Every waiter asleep: subscribed, and no acquire attempt queued or in
  // flight (one would fail with connection_lost, by design: an acquire that
  // may have run is never re-sent).
  ASSERT_TRUE(eventually([&] { return subscribers(server, unlock_channel(name)) == 1; }, 10s));
  ASSERT_TRUE(eventually([&] { return quiescent(waiter); }, 10s));
  const std::string holder_before = connection_id(server, "holder", false);
  const std::string waiter_before = connection_id(server, "waiter", false);
  ASSERT_FALSE(holder_before.empty() || waiter_before.empty()) << server.cli({"CLIENT", "LIST"});
  ASSERT_FALSE(connection_id(server, "waiter", true).empty()) << "no pub/sub connection named";

  // Kills the data connections of both Clients (not the pub/sub one).
  const std::string killed = server.cli({"CLIENT", "KILL", "TYPE", "normal"});
  const auto after_kill = Clock::now();
  EXPECT_EQ(killed, "2") << server.cli({"CLIENT", "LIST"});

  ASSERT_TRUE(eventually(
      [&] {
        const std::string h = connection_id(server, "holder", false);
        const std::string w = connection_id(server, "waiter", false);
        return !h.empty() && h != holder_before && !w.empty() && w != waiter_before;
      },
      10s))
      << "the data connections did not come back";
  // The reconnect renews every lease at once: a deadline past after_kill +
  // 30 s comes from a renewal sent on the new connection.
  EXPECT_TRUE(eventually([&] { return held.deadline() >= after_kill + 30s; }, 10s))
      << "the lease was not renewed after the kill";
  EXPECT_FALSE(held.stop_token().stop_requested());
  EXPECT_EQ(acquired.load(), 0) << "a waiter got a held lock";
  EXPECT_EQ(failed.load(), 0) << "a waiter gave up";

  held_record.exit_ns = test::steady_now_ns();
  std::error_code ec;
  held.release(ec);
  EXPECT_FALSE(ec) << ec.message();
  for (auto& t : threads) t.join();
  EXPECT_EQ(acquired.load(), kWaiters);
  EXPECT_EQ(failed.load(), 0);
  auto records = holds.records();
  records.push_back(held_record);
  const auto result = check_and_print("data connections killed", records);
  EXPECT_TRUE(result.ok()) << result.report();
  EXPECT_EQ(counter_value(server, counter), kWaiters) << "an increment was lost: two were inside";
}

// The pub/sub connection is killed while its user may not log in again (ACL
// "off"), so the unlock message is published to nobody. Once the user may
// log in, the Client resubscribes, and the resubscription wakes every waiter:
// all acquire, long before their fallback (the holder's 30 s lease) would.
TEST(ClientKill, OfThePubSubConnectionLosesTheUnlockMessageAndTheResubscriptionWakesEveryWaiter) {
  test::RedisServerOptions so;
  so.acl_users = {"waiter on >waiter-pw ~* &* +@all"};
  RedisServer server(so);
  Client holder(options_for(server, 30s, "holder"));
  ClientOptions wo = options_for(server, 30s, "waiter");
  wo.username = "waiter";
  wo.password = "waiter-pw";
  Client waiter(wo);
  const std::string name = "killed-pubsub";
  const std::string counter = "counter:" + name;
  Lock held = holder.lock(name);
  held.lock();
  HoldRecord held_record = entering(name, 0, std::nullopt);

  Holds holds;
  std::atomic<int> acquired{0};
  std::vector<std::thread> threads;
  Lock lock = waiter.lock(name);
  for (int t = 0; t < kWaiters; ++t) {
    threads.emplace_back([&, t] {
      // Far shorter than the holder's 30 s lease: only a wake-up gets it.
      if (!lock.try_lock_for(20s)) return;
      HoldRecord r = entering(name, 1, std::nullopt, t);
      ++acquired;
      if (!increment(waiter, counter)) ADD_FAILURE() << "waiter " << t << ": increment failed";
      r.exit_ns = test::steady_now_ns();  // just before the unlock
      holds.add(r);
      std::error_code ec;
      lock.unlock(ec);
      if (ec) ADD_FAILURE() << "waiter " << t << ": unlock: " << ec.message();
    });
  }
  ASSERT_TRUE(eventually([&] { return subscribers(server, unlock_channel(name)) == 1; }, 10s));
  const std::string pubsub_before = connection_id(server, "waiter", true);
  ASSERT_FALSE(pubsub_before.empty()) << server.cli({"CLIENT", "LIST"});

  // Open connections stay logged in.
  ASSERT_EQ(server.cli({"ACL", "SETUSER", "waiter", "off"}), "OK");
  EXPECT_EQ(server.cli({"CLIENT", "KILL", "TYPE", "pubsub"}), "1");
  ASSERT_EQ(subscribers(server, unlock_channel(name)), 0);
  held_record.exit_ns = test::steady_now_ns();
  held.unlock();  // published to nobody
  // The lock is free and the message lost. Wait until the Client has been
  // refused a login twice more since (each a reconnect of the pub/sub
  // connection, 10 to 100 ms apart): all that time the waiters, woken by
  // nothing, stay out.
  const long long refused = auth_failures(server, "waiter");
  ASSERT_TRUE(eventually([&] { return auth_failures(server, "waiter") >= refused + 2; }, 10s))
      << "the waiters' Client did not try to reconnect: " << server.cli({"ACL", "LOG"});
  EXPECT_EQ(acquired.load(), 0) << "a waiter got in without a wake-up";
  EXPECT_EQ(subscribers(server, unlock_channel(name)), 0);

  ASSERT_EQ(server.cli({"ACL", "SETUSER", "waiter", "on"}), "OK");
  for (auto& t : threads) t.join();
  EXPECT_EQ(acquired.load(), kWaiters) << "waiters were not woken by the resubscription";
  // The pub/sub connection came back (it has no subscription left now the
  // waiters are done, so it is the one that is not the data connection).
  const auto after = connections_named(server, "waiter");
  EXPECT_EQ(after.size(), 2u) << server.cli({"CLIENT", "LIST"});
  for (const auto& c : after) EXPECT_NE(c.id, pubsub_before) << "the killed connection is back?";
  auto records = holds.records();
  records.push_back(held_record);
  const auto result = check_and_print("pub/sub connection killed", records);
  EXPECT_TRUE(result.ok()) << result.report();
  EXPECT_EQ(counter_value(server, counter), kWaiters) << "an increment was lost: two were inside";
}

}  // namespace
}  // namespace distlock::fault
