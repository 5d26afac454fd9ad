// SimpleLock's releases and acquires whose outcome is unknown (their reply
// timed out or their connection dropped) are settled as Lock's are
// (docs/simple_lock.md, Faults): a release is sent again until the server
// answers, and an acquire that may have run is undone by the
// compare-and-delete of its token. Every watchdog lease here is 10 min, so
// no key left behind can expire within the tests' bounds.
#include <gtest/gtest.h>

#include <string>

#include "distlock/distlock.hpp"
#include "fault/fault_support.hpp"
#include "support/tcp_proxy.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

ClientOptions short_timeout(const RedisServer& server, const std::string& name) {
  ClientOptions o = options_for(server, 10min, name);
  o.command_timeout = 1s;
  return o;
}

std::string fence_counter(Client& admin, const std::string& name) {
  const Value v = admin.command("GET", "redisson_lock_token:{" + name + "}");
  return v.is_nil() ? "0" : v.as_string();
}

// The unlock's bytes are held by a proxy until its reply times out, then
// the proxy drops the connection with them: the release never reached the
// server. It stays pending and is sent again once the Client reconnects; a
// second unlock waits for it and reports how it ended.
TEST(SimpleLockPending, AnUnlockThatNeverReachedTheServerIsSentAgainAndTheRepeatReportsItsSuccess) {
  RedisServer server;
  test::TcpProxy proxy(server.port());
  Client admin(server.uri());
  ClientOptions o = short_timeout(server, "pending");
  o.port = proxy.port();
  Client client(o);
  const std::string name = "simple-pending";
  SimpleLock lock = client.fenced_simple_lock(name);
  lock.lock();
  const std::uint64_t first = lock.fencing_token().value();

  proxy.hold();
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::timeout) << ec.message();
  proxy.drop_all();  // the held release is discarded
  EXPECT_EQ(admin.command("EXISTS", name).as_integer(), 1) << "the release reached the server";
  proxy.resume();

  std::error_code again;
  lock.unlock(again);
  EXPECT_FALSE(again) << "the repeat did not report the pending release: " << again.message();
  EXPECT_EQ(admin.command("EXISTS", name).as_integer(), 0) << "reported released but still held";
  Client other(options_for(server, 10min, "other"));
  SimpleLock next = other.fenced_simple_lock(name);
  ASSERT_TRUE(next.try_lock()) << "the released lock is still held";
  EXPECT_GT(next.fencing_token().value(), first);
  next.unlock();
}

// An acquire that runs on a paused server after its reply timed out, whose
// undo could not even be queued (max_queued 1: the timed-out acquire still
// occupies the queue until its reply comes). The late SET NX did run (it
// took a fencing token) and is undone: another Client gets in long before
// the late key's 10 min lease would end.
TEST(SimpleLockPending, AnAcquireWhoseReplyAndUndoWereLostIsUndoneAndBlocksNobody) {
  RedisServer server;
  Client admin(server.uri());
  ClientOptions o = short_timeout(server, "pending");
  o.max_queued = 1;
  Client client(o);
  const std::string name = "simple-lost-acquire";
  SimpleLock lock = client.fenced_simple_lock(name);
  lock.lock();
  lock.unlock();
  const std::uint64_t before = std::stoull(fence_counter(admin, name));

  server.pause();
  std::error_code ec;
  lock.lock(ec);
  EXPECT_EQ(ec, errc::timeout) << ec.message();
  server.resume();

  Client other(options_for(server, 10min, "other"));
  SimpleLock next = other.fenced_simple_lock(name);
  ASSERT_TRUE(next.try_lock_for(20s)) << "the late acquire's key was never undone";
  EXPECT_GT(next.fencing_token().value(), before + 1)
      << "the late acquire took token " << before + 1 << "; it must have run and been undone";
  next.unlock();
  // The thread's own next lock is a new holding too.
  ASSERT_TRUE(lock.try_lock_for(20s));
  std::error_code unlocked;
  lock.unlock(unlocked);
  EXPECT_FALSE(unlocked) << unlocked.message();
  EXPECT_EQ(admin.command("EXISTS", name).as_integer(), 0);
}

}  // namespace
}  // namespace distlock::fault
