// A Client on a Sentinel set whose master was demoted without the sentinels
// announcing a switch: its next write is answered READONLY, which makes the
// Client ask the sentinels for the master again and move there.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>

#include "distlock/distlock.hpp"
#include "support/redis_sentinel.hpp"
#include "support/test_helpers.hpp"
#include "topology/sentinel_test_helpers.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;

bool link_up(const RedisServer& replica) {
  return replica.cli({"INFO", "replication"}).find("master_link_status:up") != std::string::npos;
}

TEST(Sentinel,
     AClientWhoseMasterWasDemotedBehindTheSentinelsBackMeetsReadonlyAndFindsTheNewMaster) {
  RedisSentinelSet set;
  ClientOptions o = sentinel_options(set);
  o.reconnect_min_delay = 10ms;
  o.reconnect_max_delay = 100ms;
  Client client(o);
  RedisServer& old_master = set.master();
  RedisServer& new_master = set.replica();
  ASSERT_EQ(served_port(client), old_master.port());

  // Swap the roles by hand: no sentinel runs a failover, so none publishes
  // +switch-master. REPLICAOF keeps the Client's connections to the old master.
  ASSERT_EQ(new_master.cli({"REPLICAOF", "NO", "ONE"}), "OK");
  ASSERT_EQ(old_master.cli({"REPLICAOF", "127.0.0.1", std::to_string(new_master.port())}), "OK");
  ASSERT_TRUE(eventually([&] { return link_up(old_master); }, 20s));
  // The sentinels are told to monitor the new master afresh (+monitor, never
  // +switch-master), so asking them names it.
  const std::string named = "127.0.0.1\n" + std::to_string(new_master.port());
  for (RedisServer* s : set.sentinels()) {
    ASSERT_EQ(s->cli({"SENTINEL", "REMOVE", set.master_name()}), "OK");
    ASSERT_EQ(s->cli({"SENTINEL", "MONITOR", set.master_name(), "127.0.0.1",
                      std::to_string(new_master.port()), "2"}),
              "OK");
    ASSERT_EQ(s->cli({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", set.master_name()}), named);
  }

  // The first write still goes to the old master, now a replica: READONLY,
  // reported as connection_lost (the acquire did not run).
  auto lock = client.lock("sentinel:readonly");
  std::error_code ec;
  std::optional<Lease> lease = lock.try_acquire(ec);
  EXPECT_FALSE(lease.has_value());
  EXPECT_EQ(ec, make_error_code(errc::connection_lost)) << ec.message();

  // The Client asked the sentinels and moved: a later attempt is served by
  // the new master.
  ASSERT_TRUE(eventually(
      [&] {
        lease = lock.try_acquire(ec);
        return lease.has_value();
      },
      20s))
      << "still failing with: " << ec.message() << "\n"
      << set.logs();
  EXPECT_EQ(served_port(client), new_master.port());
  EXPECT_EQ(new_master.cli({"EXISTS", "sentinel:readonly"}), "1");
  lease->release();
  EXPECT_EQ(new_master.cli({"EXISTS", "sentinel:readonly"}), "0");
}

}  // namespace
}  // namespace distlock::test
