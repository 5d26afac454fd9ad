// The reentrant lock against real redis-server processes.
#include <gtest/gtest.h>

#include <asio/use_future.hpp>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "client_impl.hpp"
#include "distlock/distlock.hpp"
#include "script/scripts.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;
using test::wait_for_stop;

// Runs `f` on another thread and returns its result.
template <class F>
auto on_other_thread(F f) {
  auto task = std::async(std::launch::async, std::move(f));
  return task.get();
}

// How many EVALSHA calls the server has run (INFO commandstats).
long long evalsha_calls(Client& client) {
  const std::string stats = client.command("INFO", "commandstats").as_string();
  const std::string field = "cmdstat_evalsha:calls=";
  const auto at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

TEST(Lock, LockAndUnlockTwiceInARow) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("twice");
  for (int i = 0; i < 2; ++i) {
    lock.lock();
    EXPECT_TRUE(lock.is_locked());
    std::error_code ec;
    lock.unlock(ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_FALSE(lock.is_locked());
  }
}

TEST(Lock, ReentrantHoldCountsGoZeroOneTwoOneZero) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("reentrant");
  EXPECT_EQ(lock.hold_count(), 0u);
  lock.lock();
  EXPECT_EQ(lock.hold_count(), 1u);
  lock.lock();
  EXPECT_EQ(lock.hold_count(), 2u);
  lock.unlock();
  EXPECT_EQ(lock.hold_count(), 1u);
  EXPECT_TRUE(lock.is_locked()) << "one hold remains";
  lock.unlock();
  EXPECT_EQ(lock.hold_count(), 0u);
  EXPECT_FALSE(lock.is_locked());
}

TEST(Lock, StoresTheRedissonLayoutOwnerHashWithHoldCountAndTtl) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("layout");
  lock.lock();
  const Value fields = client.command("HGETALL", "layout");
  ASSERT_EQ(fields.as_array().size(), 2u);
  const std::string owner = fields.as_array()[0].as_string();
  EXPECT_EQ(owner.rfind(client.id() + ":", 0), 0u) << owner;
  EXPECT_EQ(fields.as_array()[1].as_string(), "1");
  EXPECT_GT(client.command("PTTL", "layout").as_integer(), 0);
  lock.unlock();
}

TEST(Lock, IsLockedIsSeenFromAnotherThreadAndHeldOnlyByTheHolder) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("seen");
  lock.lock();
  EXPECT_TRUE(lock.is_held_by_current_thread());
  EXPECT_TRUE(on_other_thread([&] { return lock.is_locked(); }));
  EXPECT_FALSE(on_other_thread([&] { return lock.is_held_by_current_thread(); }));
  lock.unlock();
  EXPECT_FALSE(lock.is_held_by_current_thread());
}

TEST(Lock, UnlockByAnotherThreadFailsWithNotOwnerAndKeepsTheLock) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("other-thread");
  lock.lock();
  const std::error_code ec = on_other_thread([&] {
    std::error_code e;
    lock.unlock(e);
    return e;
  });
  EXPECT_EQ(ec, errc::not_owner);
  on_other_thread([&] { lock.unlock(); });  // must not throw, must change nothing
  EXPECT_TRUE(lock.is_held_by_current_thread());
  EXPECT_EQ(lock.hold_count(), 1u);
  lock.unlock();
}

TEST(Lock, FixedLeaseExpiresForOthersAndTheLateUnlockReportsLeaseLost) {
  RedisServer server;
  Client first(options_for(server));
  Client second(options_for(server));
  Lock a = first.lock("fixed");
  a.lock(1s);
  EXPECT_LE(first.command("PTTL", "fixed").as_integer(), 1000);
  Lock b = second.lock("fixed");
  ASSERT_TRUE(b.try_lock_for(10s)) << "the 1 s lease never expired";
  std::error_code ec;
  a.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
  EXPECT_TRUE(b.is_locked()) << "the late unlock must not free the new holder's lock";
  b.unlock();
}

TEST(Lock, TryLockForReturnsFalseNoEarlierThanTheWait) {
  RedisServer server;
  Client holder(options_for(server));
  Client waiter(options_for(server));
  Lock held = holder.lock("contended");
  held.lock();
  Lock lock = waiter.lock("contended");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(lock.try_lock_for(1s));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1s);
  held.unlock();
}

TEST(Lock, WatchdogKeepsTheLockPastItsTimeoutAndNobodyElseGetsIt) {
  RedisServer server;
  Client holder(options_for(server, 1s));
  Client other(options_for(server, 1s));
  Lock lock = holder.lock("watched");
  lock.lock();
  Lock rival = other.lock("watched");
  const auto end = std::chrono::steady_clock::now() + 5s;
  int checks = 0;
  while (std::chrono::steady_clock::now() < end) {
    ASSERT_GT(other.command("PTTL", "watched").as_integer(), 0) << "the lease lapsed";
    ASSERT_FALSE(rival.try_lock()) << "another client got a watched lock";
    ++checks;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_GT(checks, 10);
  EXPECT_TRUE(lock.lease_valid());
  lock.unlock();
}

// Client::close(): "stops renewing leases (they then expire on the server
// after their TTL)".
TEST(Lock, ClosedClientsLockIsNoLongerRenewedAndExpiresOnTheServerWithinTheWatchdogTimeout) {
  RedisServer server;
  Client other(options_for(server));
  {
    ClientOptions o = options_for(server, 1s);
    o.client_name = "closing-holder";
    Client holder(o);
    holder.lock("abandoned").lock();
    holder.close();
  }
  // Once the server has dropped the holder's connections it has run every
  // command they sent, including a renewal sent just before the close.
  ASSERT_TRUE(eventually(
      [&] {
        return other.command("CLIENT", "LIST").as_string().find("name=closing-holder") ==
               std::string::npos;
      },
      10s))
      << "the closed Client's connections are still open";
  // Still there, expiring within the 1 s watchdog timeout: the last renewal
  // set at most 1000 ms, and close() neither deleted nor extended the key.
  const long long pttl = other.command("PTTL", "abandoned").as_integer();
  ASSERT_GT(pttl, 0) << "close() removed the lock instead of letting it expire";
  EXPECT_LE(pttl, 1000);
  // Not renewed after the close: the expiry time the server holds never
  // changes until the key is gone. (-2: no such key.)
  const long long expires_at = other.command("PEXPIRETIME", "abandoned").as_integer();
  long long seen = expires_at;
  ASSERT_TRUE(eventually(
      [&] {
        seen = other.command("PEXPIRETIME", "abandoned").as_integer();
        return seen != expires_at;
      },
      10s))
      << "the key never expired";
  EXPECT_EQ(seen, -2) << "the closed Client's lock was renewed (expiry moved to " << seen << ")";
  EXPECT_TRUE(other.lock("abandoned").try_lock());
}

TEST(Lock, WaiterIsWokenByTheUnlockNotByExpiry) {
  RedisServer server;
  Client holder(options_for(server));
  Client waiter(options_for(server));
  Lock held = holder.lock("wake");
  // A fixed 10 min lease: the waiter's fallback retry (at the holder's TTL)
  // and its own 5 min wait both lie far beyond the 10 s bound on the
  // wake-up below, so only the unlock message can get it in within the bound.
  held.lock(10min);
  auto waited = std::async(std::launch::async, [&] {
    Lock lock = waiter.lock("wake");
    std::error_code ec;
    const bool got = lock.try_lock_for(5min, std::nullopt, ec);
    if (got) lock.unlock();
    return got;
  });
  // Unlock only once the waiter is asleep: subscribed, and its retry after
  // subscribing (ARCHITECTURE.md: subscribe before retrying) has run on the
  // server and found the lock held. Three acquire EVALSHAs: the holder's, the
  // waiter's first attempt and that retry. Unlocking earlier would let the
  // retry take the free lock without any wake-up.
  ASSERT_TRUE(eventually(
      [&] {
        return holder.command("PUBSUB", "NUMSUB", "redisson_lock__channel:{wake}")
                   .as_array()[1]
                   .as_integer() > 0;
      },
      10s))
      << "the waiter never subscribed";
  ASSERT_TRUE(eventually([&] { return evalsha_calls(holder) >= 3; }, 10s))
      << "the waiter never retried after subscribing";
  held.unlock();
  const bool woken = waited.wait_for(10s) == std::future_status::ready;
  if (!woken) waiter.close();  // ends the 5 min wait, so a failure does not hang
  ASSERT_TRUE(woken) << "the waiter was not woken by the unlock";
  EXPECT_TRUE(waited.get()) << "the woken waiter did not get the lock";
}

TEST(Lock, ForceUnlockFromAnotherClientFreesTheLockAndWakesWaiters) {
  RedisServer server;
  Client holder(options_for(server));
  Client admin(options_for(server));
  Client waiter(options_for(server));
  holder.lock("forced").lock();
  auto waited = std::async(std::launch::async, [&] {
    Lock lock = waiter.lock("forced");
    const bool got = lock.try_lock_for(10s);
    if (got) lock.unlock();
    return got;
  });
  ASSERT_TRUE(eventually(
      [&] {
        return admin.command("PUBSUB", "NUMSUB", "redisson_lock__channel:{forced}")
                   .as_array()[1]
                   .as_integer() > 0;
      },
      10s))
      << "the waiter never subscribed";
  EXPECT_TRUE(admin.lock("forced").force_unlock());
  EXPECT_TRUE(waited.get());
  EXPECT_FALSE(admin.lock("forced").force_unlock()) << "nothing left to delete";
}

// A renewal finds the key gone and reports it as taken, before the 3 s lease
// would run out (which would report it as expired). Renewals go out every 1
// to 1.5 s, so only a renewal delayed past the lease could lose that race.
TEST(Lock, DeletedKeyIsFoundByARenewalWhichRequestsTheStopTokenBeforeTheLeaseRunsOut) {
  RedisServer server;
  std::promise<LeaseLostEvent::Reason> reason;
  ClientOptions o = options_for(server, 3s);
  o.on_lease_lost = [&](const LeaseLostEvent& e) { reason.set_value(e.reason); };
  Client client(o);
  Lock lock = client.lock("deleted");
  lock.lock();
  std::stop_token token = lock.stop_token();
  EXPECT_FALSE(token.stop_requested());
  client.command("DEL", "deleted");
  ASSERT_TRUE(wait_for_stop(token, 10s));
  EXPECT_FALSE(lock.lease_valid());
  // on_lease_lost runs right after the stop request, on the I/O thread.
  auto reported = reason.get_future();
  ASSERT_EQ(reported.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(reported.get(), LeaseLostEvent::Reason::taken)
      << "the loss was found by the lease running out, not by a renewal";
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
}

TEST(Lock, ServerRestartRequestsTheStopTokenAndUnlockReportsLeaseLost) {
  RedisServer server;
  Client client(options_for(server, 900ms));
  Lock lock = client.lock("restarted");
  lock.lock();
  std::stop_token token = lock.stop_token();
  server.restart();
  EXPECT_TRUE(wait_for_stop(token, 10s));
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);
  lock.lock();  // the same thread can take it again once unlocked
  lock.unlock();
}

TEST(Lock, LeaseLostCallbackRunsWithTheLockName) {
  RedisServer server;
  std::promise<LeaseLostEvent> lost;
  ClientOptions o = options_for(server, 900ms);
  o.on_lease_lost = [&](const LeaseLostEvent& e) { lost.set_value(e); };
  Client client(o);
  Lease lease = client.lock("callback").acquire();
  client.command("DEL", "callback");
  auto f = lost.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  const LeaseLostEvent e = f.get();
  EXPECT_EQ(e.name, "callback");
  EXPECT_EQ(e.reason, LeaseLostEvent::Reason::taken);
  EXPECT_FALSE(lease.valid());
  std::error_code ec;
  lease.release(ec);
  EXPECT_EQ(ec, errc::lease_lost);
}

TEST(Lock, FencingTokensStrictlyIncreaseAcrossTwoClients) {
  RedisServer server;
  Client a(options_for(server));
  Client b(options_for(server));
  Lock la = a.fenced_lock("fenced");
  Lock lb = b.fenced_lock("fenced");
  std::mutex m;
  std::vector<std::uint64_t> tokens;
  auto run = [&](Lock& lock) {
    for (int i = 0; i < 500; ++i) {
      lock.lock();
      const auto t = lock.fencing_token();
      {
        std::lock_guard g(m);
        tokens.push_back(t.value_or(0));  // appended while holding: in acquisition order
      }
      lock.unlock();
    }
  };
  std::thread ta([&] { run(la); });
  std::thread tb([&] { run(lb); });
  ta.join();
  tb.join();
  ASSERT_EQ(tokens.size(), 1000u);
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    ASSERT_LT(tokens[i - 1], tokens[i]) << "at acquisition " << i;
  }
}

TEST(Lock, ReentryKeepsTheFencingTokenOfTheHolding) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.fenced_lock("fenced-reentry");
  Lease first = lock.acquire();
  const auto token = first.fencing_token();
  ASSERT_TRUE(token.has_value());
  first.release();
  lock.lock();
  const auto outer = lock.fencing_token();
  lock.lock();
  EXPECT_EQ(lock.fencing_token(), outer);
  EXPECT_GT(*outer, *token);
  lock.unlock();
  lock.unlock();
}

TEST(Lock, ManyCyclesLeaveNoSubscriptionAndNoRenewalBehind) {
  RedisServer server;
  Client client(options_for(server));
  std::vector<std::thread> threads;
  for (int t = 0; t < 32; ++t) {
    threads.emplace_back([&, t] {
      Lock lock = client.lock("leak:" + std::to_string(t % 5));
      for (int i = 0; i < 500; ++i) {
        lock.lock();
        lock.unlock();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(distlock::detail::Access::impl(client)->watchdog().size(), 0u)
      << "a renewal is still scheduled";
  EXPECT_TRUE(
      eventually([&] { return client.command("PUBSUB", "CHANNELS").as_array().empty(); }, 10s))
      << "subscriptions left: " << client.command("PUBSUB", "CHANNELS").to_string();
}

TEST(Lock, WaitThatTimesOutLeavesNoSubscriptionAndNoRenewalBehind) {
  RedisServer server;
  Client holder(options_for(server));
  Client waiter(options_for(server));
  holder.lock("timed-out").lock();
  EXPECT_FALSE(waiter.lock("timed-out").try_lock_for(300ms));
  EXPECT_FALSE(waiter.lock("timed-out").try_acquire_for(300ms).has_value());
  EXPECT_EQ(distlock::detail::Access::impl(waiter)->watchdog().size(), 0u)
      << "a renewal is still scheduled";
  EXPECT_TRUE(eventually(
      [&] {
        return waiter.command("PUBSUB", "NUMSUB", "redisson_lock__channel:{timed-out}")
                   .as_array()[1]
                   .as_integer() == 0;
      },
      10s))
      << "the waiter's subscription was left behind";
  holder.lock("timed-out").unlock();
}

// The scripts named in the server's SLOWLOG, oldest first (with
// slowlog-log-slower-than 0 it records every command and its arguments).
std::vector<std::string> scripts_run(Client& client) {
  std::vector<std::string> shas;
  const Value log = client.command("SLOWLOG", "GET", "1000");
  for (auto entry = log.as_array().rbegin(); entry != log.as_array().rend(); ++entry) {
    const auto& argv = entry->as_array()[3].as_array();
    std::string command = argv.empty() ? "" : argv[0].as_string();
    for (char& c : command) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (command == "evalsha" && argv.size() > 1) shas.push_back(argv[1].as_string());
  }
  return shas;
}

TEST(Lock, AcquireThatTimedOutIsUndoneWhenThePausedServerRunsItLater) {
  RedisServer server;
  ClientOptions o = options_for(server);
  o.command_timeout = 300ms;
  Client client(o);
  Lock lock = client.lock("late-acquire");
  lock.lock();  // loads the scripts: a late EVALSHA must find them and run
  lock.unlock();
  client.command("CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "1000");
  client.command("SLOWLOG", "RESET");
  server.pause();
  std::error_code ec;
  lock.lock(ec);
  EXPECT_EQ(ec, errc::timeout);
  server.resume();
  // Replies come in order on the one connection: once this PING is answered,
  // the late acquire and the release sent after it have both run.
  EXPECT_EQ(client.command("PING").as_string(), "PONG");
  const auto& scripts = script::scripts();
  EXPECT_EQ(scripts_run(client),
            (std::vector<std::string>{scripts.acquire.sha1, scripts.release.sha1}))
      << "the server must have run the timed-out acquire, then its undo";
  EXPECT_EQ(client.command("EXISTS", "late-acquire").as_integer(), 0)
      << "the acquire that ran after its timeout was left holding the lock";
  EXPECT_EQ(distlock::detail::Access::impl(client)->watchdog().size(), 0u);
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

// A reply that comes after the lease it grants has run out made a holding
// that is already over (and the lock may have gone to another since): the
// caller gets a timeout, not a Lease that is invalid from the start, and the
// holding is undone.
TEST(Lock, AnAcquireAnsweredAfterItsLeaseRanOutIsUndoneAndReportedAsATimeout) {
  RedisServer server;
  ClientOptions o = options_for(server);
  o.command_timeout = 10s;  // the reply is late, not lost
  Client client(o);
  Client admin(server.uri());
  Lock lock = client.lock("stale-acquire");
  lock.lock();  // loads the scripts: the late EVALSHA must find them and run
  lock.unlock();
  admin.command("CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "1000");
  admin.command("SLOWLOG", "RESET");
  // Every command from now on waits out the pause, far longer than the lease.
  admin.command("CLIENT", "PAUSE", "1000", "ALL");
  std::error_code ec;
  std::optional<Lease> lease = lock.try_acquire_for(0ms, 100ms, ec);
  EXPECT_EQ(ec, errc::timeout) << ec.message();
  EXPECT_FALSE(lease.has_value()) << "a lease that was over before it was handed out";
  const auto& scripts = script::scripts();
  EXPECT_TRUE(eventually(
      [&] {
        return scripts_run(admin) ==
               std::vector<std::string>{scripts.acquire.sha1, scripts.release.sha1};
      },
      10s))
      << "the server must have run the late acquire, then its undo";
  EXPECT_EQ(admin.command("EXISTS", "stale-acquire").as_integer(), 0)
      << "the late acquire was left holding the lock";
  EXPECT_EQ(distlock::detail::Access::impl(client)->watchdog().size(), 0u);
  Client other(options_for(server));
  EXPECT_TRUE(other.lock("stale-acquire").try_lock()) << "the lock was not free for another";
  other.lock("stale-acquire").unlock();
}

// A wait too long for the clock (seconds::max(), milliseconds::max()) waits
// until the lock is free: now + wait must not overflow into the past and
// turn into a single attempt.
TEST(Lock, AWaitTooLongForTheClockWaitsForTheUnlockInsteadOfGivingUpAtOnce) {
  RedisServer server;
  Client holder(options_for(server));
  Client waiter(options_for(server));
  Lock held = holder.lock("endless");
  auto waiting = [&] {
    return eventually(
        [&] {
          return holder.command("PUBSUB", "NUMSUB", "redisson_lock__channel:{endless}")
                     .as_array()[1]
                     .as_integer() > 0;
        },
        10s);
  };

  held.lock();
  auto thread_owned = std::async(std::launch::async, [&] {
    Lock lock = waiter.lock("endless");
    const bool got = lock.try_lock_for(std::chrono::seconds::max());
    if (got) lock.unlock();
    return got;
  });
  EXPECT_TRUE(waiting()) << "try_lock_for(seconds::max()) gave up without waiting";
  held.unlock();
  ASSERT_EQ(thread_owned.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(thread_owned.get());

  held.lock();
  auto handle_owned = std::async(std::launch::async, [&] {
    return waiter.lock("endless").try_acquire_for(std::chrono::milliseconds::max()).has_value();
  });
  EXPECT_TRUE(waiting()) << "try_acquire_for(milliseconds::max()) gave up without waiting";
  held.unlock();
  ASSERT_EQ(handle_owned.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(handle_owned.get());

  held.lock();
  auto async = waiter.lock("endless").async_try_acquire_for(std::chrono::milliseconds::max(),
                                                            asio::use_future);
  EXPECT_TRUE(waiting()) << "async_try_acquire_for(milliseconds::max()) gave up without waiting";
  held.unlock();
  ASSERT_EQ(async.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(async.get().has_value());
}

TEST(Lock, ScriptsAreLoadedOnConnectSoConcurrentFirstLocksSendNoEval) {
  RedisServer server;
  Client client(options_for(server));
  const Value loaded = client.command("SCRIPT", "EXISTS", script::scripts().acquire.sha1,
                                      script::scripts().release.sha1);
  EXPECT_EQ(loaded.to_string(), "[1, 1]");
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      Lock lock = client.lock("first:" + std::to_string(t));
      lock.lock();
      lock.unlock();
    });
  }
  for (auto& th : threads) th.join();
  const std::string stats = client.command("INFO", "commandstats").as_string();
  EXPECT_EQ(stats.find("cmdstat_eval:"), std::string::npos) << stats;
  EXPECT_NE(stats.find("cmdstat_evalsha:calls=32"), std::string::npos) << stats;
}

TEST(Lock, FiftyThreadsTenRoundsOverFiveNamesNeverOverlap) {
  RedisServer server;
  Client client(options_for(server));
  std::atomic<int> inside[5] = {};
  std::atomic<int> overlaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 50; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int round = 0; round < 10; ++round) {
        const int n = static_cast<int>(rng() % 5);
        Lock lock = client.lock("mutex:" + std::to_string(n));
        std::lock_guard guard(lock);
        if (inside[n].fetch_add(1) != 0) ++overlaps;
        std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 5));  // the work
        inside[n].fetch_sub(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(overlaps.load(), 0);
}

TEST(Lock, FourProcessesOfEightThreadsIncrementCountersExactly) {
  RedisServer server;
  Client client(options_for(server));
  std::vector<test::ChildProcess> workers;
  for (int p = 0; p < 4; ++p) {
    workers.push_back(test::ChildProcess::spawn(
        {DISTLOCK_LOCK_WORKER, server.uri(), "counter-lock", "counter", "8", "50"}));
  }
  for (auto& w : workers) {
    const auto status = w.wait_for_exit(120s);
    ASSERT_TRUE(status.has_value()) << "a worker hung";
    EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);
  }
  EXPECT_EQ(client.command("GET", "counter").as_string(), std::to_string(4 * 8 * 50));
}

TEST(Lock, WorksWithStdUniqueLockScopedLockAndTryLockUntil) {
  RedisServer server;
  Client client(options_for(server));
  Lock a = client.lock("std-a");
  Lock b = client.lock("std-b");
  {
    std::scoped_lock both(a, b);
    EXPECT_TRUE(a.is_held_by_current_thread());
    EXPECT_TRUE(b.is_held_by_current_thread());
  }
  EXPECT_FALSE(a.is_locked());
  {
    std::unique_lock guard(a, std::defer_lock);
    EXPECT_TRUE(guard.try_lock_for(100ms));
    EXPECT_TRUE(guard.owns_lock());
  }
  EXPECT_FALSE(a.is_locked());
  EXPECT_TRUE(a.try_lock_until(std::chrono::system_clock::now() + 1s));
  a.unlock();
}

TEST(Lock, LeaseMovesBetweenThreadsAndItsDestructorReleases) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("lease");
  Lease lease = lock.acquire();
  EXPECT_TRUE(lease.valid());
  EXPECT_GT(lease.remaining(), 0ms);
  EXPECT_FALSE(lock.try_acquire().has_value()) << "a second lease of a held lock";
  std::thread([l = std::move(lease)]() mutable {
    EXPECT_TRUE(l.valid());
  }).join();  // destroyed on the other thread: released
  EXPECT_FALSE(lock.is_locked());
  auto again = lock.try_acquire_for(1s, 5s);
  ASSERT_TRUE(again.has_value());
  EXPECT_LE(client.command("PTTL", "lease").as_integer(), 5000);
  again->release();
  again->release();  // idempotent
  EXPECT_FALSE(lock.is_locked());
}

TEST(Lock, AsyncAcquireCompletesWithAValidLease) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("async");
  auto f = lock.async_acquire(asio::use_future);
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  Lease lease = f.get();
  EXPECT_TRUE(lease.valid());
  // A second acquire waits until the first is released.
  auto g = lock.async_acquire(asio::use_future);
  EXPECT_EQ(g.wait_for(200ms), std::future_status::timeout);
  lease.release();
  ASSERT_EQ(g.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(g.get().valid());
}

TEST(Lock, BadNamesAreRejectedBeforeAnythingIsSent) {
  RedisServer server;
  Client client(options_for(server));
  try {
    client.lock("");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos);
  }
  EXPECT_THROW(client.lock(std::string(64 * 1024 + 1, 'x')), Error);
  EXPECT_NO_THROW(client.lock(std::string(64 * 1024, 'x')));
}

TEST(Lock, NonPositiveLeaseOrNegativeWaitIsRejected) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("bad-args");
  for (auto bad : {0ms, -5ms}) {
    try {
      lock.lock(bad);
      FAIL() << "lease " << bad.count();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
    }
    EXPECT_THROW(lock.try_acquire_for(1s, bad), Error);
  }
  EXPECT_THROW(lock.try_acquire_for(-1ms), Error);
  std::error_code ec;
  EXPECT_FALSE(lock.try_lock_for(-1ms, std::nullopt, ec));
  EXPECT_EQ(ec, errc::invalid_argument);
  EXPECT_FALSE(lock.is_locked()) << "nothing may be left locked";
}

TEST(Lock, KeyOfTheWrongTypeFailsWithServerErrorNamingWrongtype) {
  RedisServer server;
  Client client(options_for(server));
  client.command("SET", "a-string", "x");
  Lock lock = client.lock("a-string");
  try {
    lock.lock();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::server_error);
    EXPECT_NE(std::string(e.what()).find("WRONGTYPE"), std::string::npos) << e.what();
  }
  EXPECT_EQ(distlock::detail::Access::impl(client)->watchdog().size(), 0u)
      << "a failed acquire left a renewal";
  EXPECT_EQ(client.command("GET", "a-string").as_string(), "x");
}

TEST(Lock, UseAfterCloseFailsWithClosed) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("closed");
  client.close();
  try {
    lock.lock();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::closed);
  }
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::closed);
  EXPECT_THROW(lock.acquire(), Error);
}

TEST(Lock, ClosingTheClientEndsABlockedWaiterWithClosed) {
  RedisServer server;
  Client holder(options_for(server));
  holder.lock("blocked").lock();
  Client waiter(options_for(server));
  auto waited = std::async(std::launch::async, [&] {
    std::error_code ec;
    waiter.lock("blocked").lock(ec);
    return ec;
  });
  ASSERT_TRUE(eventually(
      [&] {
        return holder.command("PUBSUB", "NUMSUB", "redisson_lock__channel:{blocked}")
                   .as_array()[1]
                   .as_integer() > 0;
      },
      10s));
  waiter.close();
  ASSERT_EQ(waited.wait_for(10s), std::future_status::ready) << "close left a waiter hanging";
  EXPECT_EQ(waited.get(), errc::closed);
}

}  // namespace
}  // namespace distlock
