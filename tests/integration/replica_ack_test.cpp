// ClientOptions::min_replicas_acked: WAIT behind every acquire and renewal,
// against a real master and replica (issue 13, item 4).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/tcp_proxy.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::RedisServer;

// Full syncs start at once (the default waits 5 s to batch replicas).
test::RedisServerOptions primary() {
  test::RedisServerOptions o;
  o.config = {{"repl-diskless-sync-delay", "0"}};
  return o;
}

// A replica of the master listening on `port` (or of the proxy in front of it).
test::RedisServerOptions replica_of(std::uint16_t port) {
  test::RedisServerOptions o;
  o.config = {{"replicaof", "127.0.0.1 " + std::to_string(port)},
              {"repl-diskless-sync-delay", "0"}};
  return o;
}

// A master and one replica of it, the link up. With `through_proxy` the
// replica's link to the master goes through a TcpProxy (its replicaof names
// the proxy's port), so a test can hold the replication traffic.
struct Replicated {
  RedisServer master{primary()};
  std::unique_ptr<test::TcpProxy> link;
  std::unique_ptr<RedisServer> replica_server;
  RedisServer& replica;

  explicit Replicated(bool through_proxy = false)
      : link(through_proxy ? std::make_unique<test::TcpProxy>(master.port()) : nullptr),
        replica_server(
            std::make_unique<RedisServer>(replica_of(link ? link->port() : master.port()))),
        replica(*replica_server) {
    // Linked, and online on the master (a diskless replica goes online with
    // its first acknowledgement; WAIT counts only online replicas).
    const bool linked = test::eventually(
        [&] {
          return replica.cli({"INFO", "replication"}).find("master_link_status:up") !=
                     std::string::npos &&
                 master.cli({"INFO", "replication"}).find("state=online") != std::string::npos;
        },
        20s);
    if (!linked) throw std::runtime_error("the replica did not link to the master");
    // Right after going online a replica may take up to its 1 s periodic
    // ACK to acknowledge (seen on 7.0); wait until a write is acknowledged
    // promptly, so the tests below measure the steady state.
    Client probe(test::options_for(master));
    const bool acking = test::eventually(
        [&] {
          probe.command("SET", "replica-probe", "1");
          return probe.command("WAIT", "1", "50").as_integer() == 1;
        },
        20s);
    if (!acking) throw std::runtime_error("the replica does not acknowledge writes");
  }
};

// WAIT 1 with `timeout`: generous where the replica is up (a loaded
// machine), short where it cannot answer (the test waits it out).
ClientOptions acking(const RedisServer& master,
                     std::chrono::milliseconds watchdog = 30s,
                     std::chrono::milliseconds timeout = 2s) {
  ClientOptions o = test::options_for(master, watchdog);
  o.min_replicas_acked = 1;
  o.replica_ack_timeout = timeout;
  return o;
}

// The replica's link is held: the master runs the acquire at once, but its
// WAIT cannot be acknowledged, so the acquire must not return; once the link
// is resumed the acknowledgement comes and the acquire returns held. (A
// replica on loopback has the key almost at once either way: only holding
// the link tells an acquire that waits from one that does not.)
TEST(ReplicaAck, AnAcquireReturnsOnlyOnceTheReplicaHasAcknowledgedIt) {
  Replicated servers(true);
  // WAIT gives up after 20 s, longer than the bounded wait below that sees
  // it blocked; the command timeout is longer still.
  ClientOptions o = acking(servers.master, 30s, 20s);
  o.command_timeout = 60s;
  Client client(o);
  auto lock = client.lock("acked");
  servers.link->hold();
  auto acquiring = std::async(std::launch::async, [&] { return lock.acquire(); });
  // The acquire ran on the master and its WAIT is blocked there.
  const bool waiting = test::eventually(
      [&] {
        return servers.master.cli({"EXISTS", "acked"}) == "1" &&
               servers.master.cli({"INFO", "clients"}).find("blocked_clients:1") !=
                   std::string::npos;
      },
      20s);
  const bool returned_early = acquiring.wait_for(0s) == std::future_status::ready;
  const std::string on_replica = servers.replica.cli({"EXISTS", "acked"});
  servers.link->resume();
  EXPECT_TRUE(waiting) << servers.master.cli({"INFO", "clients"});
  EXPECT_FALSE(returned_early) << "the acquire returned before the replica acknowledged it";
  EXPECT_EQ(on_replica, "0") << "the link was not held";
  ASSERT_EQ(acquiring.wait_for(30s), std::future_status::ready);
  Lease lease = acquiring.get();
  EXPECT_TRUE(lease.valid());
  EXPECT_EQ(servers.replica.cli({"EXISTS", "acked"}), "1");
  lease.release();
}

TEST(ReplicaAck, AnAcquireNoReplicaAcknowledgesIsUndoneAndFailsWithReplicationFailed) {
  RedisServer master;  // no replica at all
  Client client(acking(master, 30s, 100ms));
  auto lock = client.lock("unacked");
  try {
    lock.lock();
    FAIL() << "an acquire no replica acknowledged was reported held";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::replication_failed) << e.what();
    EXPECT_NE(std::string(e.what()).find("only 0 of 1 replicas"), std::string::npos) << e.what();
  }
  // The compensating release (sent in the background) takes the key back
  // off the master.
  EXPECT_TRUE(test::eventually([&] { return master.cli({"EXISTS", "unacked"}) == "0"; }, 10s));
  EXPECT_FALSE(lock.is_held_by_current_thread());
  Client plain(test::options_for(master));
  EXPECT_TRUE(plain.lock("unacked").try_lock());
}

TEST(ReplicaAck, AnAcquireWhileTheReplicaIsPausedIsUndone) {
  Replicated servers;
  Client client(acking(servers.master, 30s, 100ms));
  servers.replica.pause();
  std::error_code ec;
  Lease lease = client.lock("paused-replica").acquire(ec);
  const auto info =
      servers.master.cli({"INFO", "replication"}) + servers.master.cli({"INFO", "commandstats"});
  servers.replica.resume();
  EXPECT_EQ(ec, errc::replication_failed) << info;
  EXPECT_FALSE(lease.valid());
  EXPECT_TRUE(test::eventually(
      [&] {
        return servers.master.cli({"EXISTS", "paused-replica"}) == "0";
      },
      10s));
}

TEST(ReplicaAck, RenewalsTheReplicaAcknowledgesKeepTheLease) {
  Replicated servers;
  Client client(acking(servers.master, 600ms));  // renewal every 200 ms
  Client admin(test::options_for(servers.master));
  Lease lease = client.lock("kept").acquire();
  const auto before = test::evalsha_calls(admin);
  // Several renewals, each acknowledged: the lease outlives its first term.
  ASSERT_TRUE(test::eventually([&] { return test::evalsha_calls(admin) >= before + 5; }, 20s))
      << "the lease was lost: " << lease.stop_token().stop_requested();
  EXPECT_FALSE(lease.stop_token().stop_requested());
  EXPECT_TRUE(lease.valid());
  lease.release();
}

TEST(ReplicaAck, RenewalsNoReplicaAcknowledgesAreNotBelievedAndTheLeaseIsLost) {
  Replicated servers;
  // WAIT gives up after 100 ms, well inside each 200 ms renewal period: the
  // renewals' replies come in time; only their acknowledgement is missing.
  Client client(acking(servers.master, 600ms, 100ms));
  Lease lease = client.lock("unrenewed").acquire();
  servers.replica.pause();
  // The server still extends the key, but the holder must not believe a
  // renewal that a failover could lose: its lease runs out and it is told.
  const bool told = test::wait_for_stop(lease.stop_token(), 20s);
  servers.replica.resume();
  EXPECT_TRUE(told);
}

TEST(ReplicaAck, OptionsOutOfRangeAreRejectedByTheClient) {
  RedisServer server;
  ClientOptions negative = test::options_for(server);
  negative.min_replicas_acked = -1;
  EXPECT_THROW(Client{negative}, Error);
  ClientOptions too_long = acking(server);
  too_long.replica_ack_timeout = too_long.command_timeout;
  try {
    Client c(too_long);
    FAIL() << "replica_ack_timeout equal to command_timeout was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("replica_ack_timeout"), std::string::npos);
  }
}

TEST(ReplicaAck, TheUriCarriesTheAcknowledgementOptions) {
  const auto o = ClientOptions::from_uri(
      "redis://127.0.0.1:7000?min_replicas_acked=2&replica_ack_timeout_ms=250");
  EXPECT_EQ(o.min_replicas_acked, 2);
  EXPECT_EQ(o.replica_ack_timeout, 250ms);
  EXPECT_THROW(ClientOptions::from_uri("redis://127.0.0.1:7000?min_replicas_acked=-1"), Error);
  EXPECT_THROW(ClientOptions::from_uri("redis://127.0.0.1:7000?replica_ack_timeout_ms=0"), Error);
}

}  // namespace
}  // namespace distlock
