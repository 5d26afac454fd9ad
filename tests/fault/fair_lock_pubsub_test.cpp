// A fair lock's waiter across a reconnect of its Client's pub/sub connection
// (CLIENT KILL TYPE pubsub): the grant still reaches it. Every fallback is
// longer than the 20 s bounds: the holder's lease, the waiter's liveness
// (its watchdog lease, which is also the TTL of a grant made to it) and its
// own wait are 10 min, so the waiter, once settled, retries by itself only
// 10 min later.
#include <gtest/gtest.h>

#include <future>
#include <string>

#include "distlock/distlock.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

long long evalsha_calls(const RedisServer& server) {
  const std::string stats = server.cli({"INFO", "commandstats"});
  const std::string field = "cmdstat_evalsha:calls=";
  const auto at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

// A holder and a waiter Client (ACL user "waiter", so its logins can be
// refused), the lock held by the holder and one waiter settled in line: it
// is queued, subscribed to its own channel, and has made its attempt after
// subscribing.
struct Line {
  explicit Line(const std::string& lock_name)
      : server(server_options()),
        name(lock_name),
        holder(options_for(server, 10min, "holder")),
        waiter(waiter_options(server)),
        held(holder.fair_lock(name)),
        waiting(waiter.fair_lock(name)) {}

  static test::RedisServerOptions server_options() {
    test::RedisServerOptions so;
    so.acl_users = {"waiter on >waiter-pw ~* &* +@all"};
    return so;
  }
  static ClientOptions waiter_options(const RedisServer& s) {
    ClientOptions o = options_for(s, 10min, "waiter");
    o.username = "waiter";
    o.password = "waiter-pw";
    return o;
  }

  // Starts the waiter; returns its owner id once it has settled.
  std::string start_waiting() {
    held.lock();
    const long long before = evalsha_calls(server);
    got = std::async(std::launch::async, [this] {
      const bool in = waiting.try_lock_for(10min);
      const bool mine = in && waiting.is_held_by_current_thread();
      if (in) waiting.unlock();
      return mine;
    });
    const std::string queue = "redisson_lock_queue:{" + name + "}";
    std::string owner;
    EXPECT_TRUE(eventually(
        [&] {
          owner = server.cli({"LINDEX", queue, "0"});
          return !owner.empty();
        },
        20s))
        << "the waiter never queued";
    channel = "redisson_lock__channel:{" + name + "}:" + owner;
    EXPECT_TRUE(eventually([&] { return subscribers(server, channel) == 1; }, 20s))
        << "the waiter never subscribed to its channel";
    // Its first attempt queued it; the subscription's confirmation makes the
    // second. No renewal runs meanwhile (10 min leases).
    EXPECT_TRUE(eventually([&] { return evalsha_calls(server) >= before + 2; }, 20s))
        << "the waiter did not make its attempt after subscribing";
    return owner;
  }

  // True when the waiter got the lock within `bound`; otherwise its Client
  // is closed, which ends the wait.
  bool got_it_within(std::chrono::milliseconds bound) {
    const bool ready = got.wait_for(bound) == std::future_status::ready;
    if (!ready) waiter.close();
    return ready && got.get();
  }

  RedisServer server;
  std::string name;
  Client holder;
  Client waiter;
  Lock held;
  Lock waiting;
  std::future<bool> got;
  std::string channel;
};

// The pub/sub connection comes back before the unlock: the grant's message
// arrives on the resubscribed channel.
TEST(FairLockPubSub, AWaiterWhosePubSubConnectionWasKilledGetsTheGrantOnItsNewSubscription) {
  Line line("fair-resubscribed");
  line.start_waiting();
  EXPECT_EQ(line.server.cli({"CLIENT", "KILL", "TYPE", "pubsub"}), "1");
  ASSERT_TRUE(eventually([&] { return subscribers(line.server, line.channel) == 1; }, 20s))
      << "the waiter's Client did not resubscribe";
  line.held.unlock();
  EXPECT_TRUE(line.got_it_within(20s)) << "the grant did not reach the resubscribed waiter";
}

// The pub/sub connection is killed while its user may not log in again (ACL
// "off"), and the unlock grants the lock to the waiter then: the grant's
// message goes to nobody. Once the user may log in, the Client resubscribes,
// the resubscription wakes the waiter, and its attempt finds the grant.
TEST(FairLockPubSub, AGrantPublishedWhileThePubSubConnectionIsDownIsFoundAfterTheResubscription) {
  Line line("fair-lost-grant");
  const std::string owner = line.start_waiting();
  ASSERT_EQ(line.server.cli({"ACL", "SETUSER", "waiter", "off"}), "OK");
  EXPECT_EQ(line.server.cli({"CLIENT", "KILL", "TYPE", "pubsub"}), "1");
  ASSERT_EQ(subscribers(line.server, line.channel), 0);
  line.held.unlock();  // granted to the waiter, published to nobody
  EXPECT_EQ(line.server.cli({"HEXISTS", line.name, owner}), "1") << "not granted to the waiter";
  // Two refused logins since (reconnects of the pub/sub connection, 10 to
  // 100 ms apart): all that time the waiter, woken by nothing, stays out.
  const long long refused = auth_failures(line.server, "waiter");
  ASSERT_TRUE(eventually([&] { return auth_failures(line.server, "waiter") >= refused + 2; }, 10s))
      << "the waiter's Client did not try to reconnect";
  EXPECT_NE(line.got.wait_for(0s), std::future_status::ready) << "it got in without a wake-up";
  ASSERT_EQ(line.server.cli({"ACL", "SETUSER", "waiter", "on"}), "OK");
  EXPECT_TRUE(line.got_it_within(20s)) << "the resubscription did not wake the waiter";
}

}  // namespace
}  // namespace distlock::fault
