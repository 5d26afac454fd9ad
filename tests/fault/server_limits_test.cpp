// The server refuses work: memory full (maxmemory, noeviction) or an ACL
// user without the rights distlock's scripts need.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include "client_impl.hpp"
#include "distlock/distlock.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

ClientOptions as_user(const RedisServer& server, const std::string& user) {
  ClientOptions o = options_for(server, 2s, user);
  o.username = user;
  o.password = "pw";
  return o;
}

// Fills the server past its maxmemory (noeviction: writes are refused) and
// returns what a plain SET gets then: the server's error text, or "accepted".
// Callers assert it is an OOM refusal, so a fill that did not fill cannot
// pass unnoticed.
std::string fill_memory(Client& client) {
  EXPECT_EQ(client.command("DEBUG", "POPULATE", "20000", "filler", "100").as_string(), "OK");
  // Below what is used already.
  EXPECT_EQ(client.command("CONFIG", "SET", "maxmemory", "1mb").as_string(), "OK");
  try {
    client.command("SET", "plain-write", "x");
    return "accepted";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(ServerLimits, MaxmemoryWithNoevictionFailsTheAcquireWithAnOomServerErrorAndHoldsNothing) {
  RedisServer server;  // maxmemory-policy is noeviction by default
  Client client(options_for(server, 900ms, "client"));
  Lease held = client.lock("held-before").acquire();
  const std::string plain_set = fill_memory(client);
  ASSERT_TRUE(contains(plain_set, "OOM"))
      << "the memory is not full: a plain SET got " << plain_set;
  const auto full = std::chrono::steady_clock::now();
  Lock lock = client.fenced_lock("oom");
  try {
    lock.lock();
    FAIL() << "acquired with the memory full";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::server_error);
    EXPECT_TRUE(contains(e.what(), "OOM")) << e.what();
    std::printf("[maxmemory] %s\n", e.what());
  }
  std::error_code ec;
  EXPECT_FALSE(lock.try_acquire_for(0ms, std::nullopt, ec).has_value());
  EXPECT_EQ(ec, errc::server_error);
  EXPECT_EQ(client.command("EXISTS", "oom").as_integer(), 0) << "a lock was left";
  EXPECT_EQ(client.command("EXISTS", "redisson_lock_token:{oom}").as_integer(), 0)
      << "the fencing counter moved";
  EXPECT_EQ(distlock::detail::Access::impl(client)->watchdog().size(), 1u)
      << "a failed acquire left a renewal";
  // Renewing needs no memory (PEXPIRE is allowed): a lease held before keeps
  // being renewed. A deadline past full + 900 ms comes from a renewal sent
  // with the memory full.
  EXPECT_TRUE(eventually([&] { return held.deadline() >= full + 900ms; }, 10s));
  EXPECT_FALSE(held.stop_token().stop_requested());
  held.release(ec);
  EXPECT_FALSE(ec) << "releasing needs no memory either: " << ec.message();

  client.command("CONFIG", "SET", "maxmemory", "0");
  lock.lock();  // and it works again once there is memory
  lock.unlock();
}

// The inner unlock of a reentrant hold decrements the count with HINCRBY,
// which Redis refuses inside a script when memory is full (HINCRBY is flagged
// denyoom, although a decrement needs no memory) unless the script is
// flagged allow-oom, as release.lua is. The test first proves the memory is
// full: a plain SET is refused with OOM.
TEST(ServerLimits, MaxmemoryReachedDuringAReentrantHoldStillLetsItsTwoUnlocksFreeTheLock) {
  RedisServer server;
  Client client(options_for(server, 30s, "client"));
  Lock lock = client.lock("reentrant-oom");
  lock.lock();
  lock.lock();
  const std::string plain_set = fill_memory(client);
  ASSERT_TRUE(contains(plain_set, "OOM"))
      << "the memory is not full: a plain SET got " << plain_set;
  std::error_code inner;
  lock.unlock(inner);
  std::printf("[maxmemory] inner unlock: %s\n", inner ? inner.message().c_str() : "ok");
  std::error_code outer;
  lock.unlock(outer);
  std::printf("[maxmemory] outer unlock: %s\n", outer ? outer.message().c_str() : "ok");
  EXPECT_FALSE(inner) << "inner unlock: " << inner.message();
  EXPECT_FALSE(outer) << "outer unlock: " << outer.message();
  EXPECT_EQ(lock.hold_count(), 0u);
  EXPECT_FALSE(lock.is_locked()) << "both unlocks returned and the lock is still held; inner: "
                                 << inner.message() << ", outer: " << outer.message();
}

TEST(ServerLimits, AclUserWithoutEvalshaFailsTheFirstLockWithNopermNamingEvalsha) {
  test::RedisServerOptions so;
  so.acl_users = {"noevalsha on >pw ~* &* +@all -evalsha"};
  RedisServer server(so);
  Client client(as_user(server, "noevalsha"));  // connecting needs no script
  Lock lock = client.lock("acl-evalsha");
  try {
    lock.lock();
    FAIL() << "acquired without EVALSHA";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::server_error);
    EXPECT_TRUE(contains(e.what(), "NOPERM")) << e.what();
    EXPECT_TRUE(contains(e.what(), "evalsha")) << e.what();
    std::printf("[acl] %s\n", e.what());
  }
  EXPECT_THROW(lock.acquire(), Error);
  EXPECT_EQ(server.cli({"EXISTS", "acl-evalsha"}), "0");
  EXPECT_EQ(distlock::detail::Access::impl(client)->watchdog().size(), 0u);
}

// PUBLISH runs inside the release script, after the DEL: Redis does not roll
// a script back, so the lock is released, and the error comes back to the
// unlock. Redis 7.0's text does not name the command ("The user executing
// the script can't run this command or subcommand"), and unlock(ec) carries
// only the code. Waiters are not woken; their TTL fallback gets them in.
TEST(ServerLimits, AclUserWithoutPublishLocksButItsUnlockFailsWithServerErrorAndWaitersFallBack) {
  test::RedisServerOptions so;
  so.acl_users = {"nopublish on >pw ~* &* +@all -publish"};
  RedisServer server(so);
  Client holder(as_user(server, "nopublish"));
  Client waiter(options_for(server, 30s, "waiter"));
  Lock lock = holder.lock("acl-publish");
  lock.lock();  // the acquire script does not publish
  auto waited = std::async(std::launch::async, [&] {
    Lock other = waiter.lock("acl-publish");
    const bool got = other.try_lock_for(20s);  // the holder's lease is 2 s
    if (got) other.unlock();
    return got;
  });
  ASSERT_TRUE(
      eventually([&] { return subscribers(server, unlock_channel("acl-publish")) == 1; }, 10s));
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::server_error);
  EXPECT_EQ(server.cli({"EXISTS", "acl-publish"}), "0") << "the DEL before the PUBLISH stays";
  EXPECT_TRUE(waited.get()) << "the waiter was never let in";

  lock.lock();
  try {
    lock.force_unlock();
    FAIL() << "force_unlock published without PUBLISH rights";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::server_error);
    std::printf("[acl] force_unlock: %s\n", e.what());
  }
  lock.unlock();
}

// Redis 7 gives a new ACL user no channel rights (acl-pubsub-default
// resetchannels), so distlock's SUBSCRIBE is refused. The first wait says so
// (src/runtime/waiters.cpp, Waiters::refused) instead of degrading silently
// to polling at the holder's TTL. The throwing overload carries the text.
TEST(ServerLimits, AclUserWithoutChannelRightsFailsItsFirstWaitWithServerErrorNamingTheChannel) {
  test::RedisServerOptions so;
  so.acl_users = {"nochannels on >pw ~* resetchannels +@all"};
  RedisServer server(so);
  Client holder(options_for(server, 30s, "holder"));
  Client waiter(as_user(server, "nochannels"));
  Lock held = holder.lock("acl-channels");
  held.lock();
  Lock lock = waiter.lock("acl-channels");
  try {
    const bool got = lock.try_lock_for(3s);
    if (got) lock.unlock();
    ADD_FAILURE() << "the refused SUBSCRIBE was not reported; the wait returned " << got;
  } catch (const Error& e) {
    std::printf("[acl] wait: %s\n", e.what());
    EXPECT_EQ(e.code(), errc::server_error);
    EXPECT_TRUE(contains(e.what(), unlock_channel("acl-channels"))) << e.what();
    EXPECT_TRUE(contains(e.what(), "NOPERM")) << e.what();
  }
  held.unlock();
}

TEST(ServerLimits, AclUserWithoutChannelRightsLocksButItsUnlockFailsWithServerError) {
  test::RedisServerOptions so;
  so.acl_users = {"nochannels on >pw ~* resetchannels +@all"};
  RedisServer server(so);
  Client client(as_user(server, "nochannels"));
  Lock lock = client.lock("acl-channels-unlock");
  lock.lock();
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::server_error);
  EXPECT_EQ(server.cli({"EXISTS", "acl-channels-unlock"}), "0");
}

}  // namespace
}  // namespace distlock::fault
