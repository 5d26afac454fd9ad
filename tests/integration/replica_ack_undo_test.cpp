// ClientOptions::min_replicas_acked, the undo of an acquire too few replicas
// acknowledged, for every primitive (the acquire loop is shared, but each
// primitive undoes with its own release): against a master with no replica,
// each acquire runs on the master, its WAIT 1 gets 0 acknowledgements, and
// the acquire must fail with errc::replication_failed and leave nothing on
// the master.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::RedisServer;

// The leases are 10 minutes, so nothing expires within the 20 s the tests
// wait for the undo: only the compensating release can take a key away.
ClientOptions acking_no_one(const RedisServer& master) {
  ClientOptions o = test::options_for(master, 10min);
  o.min_replicas_acked = 1;
  o.replica_ack_timeout = 100ms;
  return o;
}

// Runs `acquire` (which reports through its error_code), expects the
// documented failure, and then a master that holds exactly `keys_left` keys
// (the semaphore's permit count) once the undo, sent in the background, ran.
void expect_undone(RedisServer& master,
                   const std::function<void(std::error_code&)>& acquire,
                   const std::string& keys_left = "0") {
  std::error_code ec;
  acquire(ec);
  EXPECT_EQ(ec, errc::replication_failed) << ec.message();
  // The code is only given when the acquire script answered "acquired" and
  // its WAIT did not: the acquire ran on the master.
  const bool undone = test::eventually([&] { return master.cli({"DBSIZE"}) == keys_left; }, 20s);
  EXPECT_TRUE(undone) << "left on the master: " << master.cli({"KEYS", "*"});
}

TEST(ReplicaAckUndo, ALockAcquireNoReplicaAcknowledgesFailsAndLeavesNothing) {
  RedisServer master;
  Client client(acking_no_one(master));
  auto lock = client.lock("undo-lock");
  expect_undone(master, [&](std::error_code& ec) { lock.lock(ec); });
  EXPECT_FALSE(lock.is_held_by_current_thread());
}

TEST(ReplicaAckUndo, AFairLockAcquireNoReplicaAcknowledgesFailsAndLeavesNothing) {
  RedisServer master;
  Client client(acking_no_one(master));
  auto lock = client.fair_lock("undo-fair");
  expect_undone(master, [&](std::error_code& ec) { lock.lock(ec); });
  EXPECT_FALSE(lock.is_held_by_current_thread());
}

TEST(ReplicaAckUndo, AReadLockAcquireNoReplicaAcknowledgesFailsAndLeavesNothing) {
  RedisServer master;
  Client client(acking_no_one(master));
  auto rw = client.read_write_lock("undo-rw-read");
  expect_undone(master, [&](std::error_code& ec) { rw.lock_shared(ec); });
  EXPECT_FALSE(rw.read_lock().is_held_by_current_thread());
}

TEST(ReplicaAckUndo, AWriteLockAcquireNoReplicaAcknowledgesFailsAndLeavesNothing) {
  RedisServer master;
  Client client(acking_no_one(master));
  auto rw = client.read_write_lock("undo-rw-write");
  expect_undone(master, [&](std::error_code& ec) { rw.lock(ec); });
  EXPECT_FALSE(rw.write_lock().is_held_by_current_thread());
}

TEST(ReplicaAckUndo, ASimpleLockAcquireNoReplicaAcknowledgesFailsAndLeavesNothing) {
  RedisServer master;
  Client client(acking_no_one(master));
  auto lock = client.simple_lock("undo-simple");
  expect_undone(master, [&](std::error_code& ec) { lock.lock(ec); });
}

TEST(ReplicaAckUndo, APermitNoReplicaAcknowledgesFailsAndGivesThePermitBack) {
  RedisServer master;
  Client client(acking_no_one(master));
  auto sem = client.semaphore("undo-permit");
  ASSERT_TRUE(sem.try_set_permits(2));
  expect_undone(
      master,
      [&](std::error_code& ec) {
        try {
          sem.acquire_permit(1);
        } catch (const Error& e) {
          ec = e.code();
        }
      },
      "1");
  // The one key left is the count, with both permits back (no holder's
  // lease or share left behind).
  EXPECT_EQ(master.cli({"GET", "undo-permit"}), "2");
}

// The Client's shared holder of a first acquire was never active: the
// retiring release must still be sent (it was not, before: the permit stayed
// taken until the holder's 10-minute lease ended).
TEST(ReplicaAckUndo, AClientHeldSemaphoreAcquireNoReplicaAcknowledgesFailsAndGivesThePermitBack) {
  RedisServer master;
  Client client(acking_no_one(master));
  auto sem = client.semaphore("undo-sem");
  ASSERT_TRUE(sem.try_set_permits(2));
  expect_undone(
      master, [&](std::error_code& ec) { sem.acquire(1, ec); }, "1");
  EXPECT_EQ(master.cli({"GET", "undo-sem"}), "2");
  EXPECT_EQ(sem.held_permits(), 0);
}

}  // namespace
}  // namespace distlock
