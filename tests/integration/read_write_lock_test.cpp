// The read-write lock against real redis-server processes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

template <class F>
auto on_other_thread(F f) {
  return std::async(std::launch::async, std::move(f)).get();
}

using test::evalsha_calls;

// How many keys match `pattern` (few keys per test server).
std::size_t key_count(Client& client, const std::string& pattern) {
  return client.command("KEYS", pattern).as_array().size();
}

// `n` parties each call arrive(); all_arrived() waits (bounded) for all.
class Meeting {
 public:
  explicit Meeting(int n) : left_(n) {}
  // Arrives and waits until all have, at most `bound`; false on timeout.
  bool arrive_and_wait(std::chrono::milliseconds bound) {
    std::unique_lock lock(m_);
    if (--left_ == 0) cv_.notify_all();
    return cv_.wait_for(lock, bound, [&] { return left_ <= 0; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int left_;
};

TEST(ReadWriteLock, ReadersOnDifferentClientsShareAndExcludeAWriter) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server)), c(options_for(server));
  ReadWriteLock ra = a.read_write_lock("share");
  ReadWriteLock rb = b.read_write_lock("share");
  ReadWriteLock rc = c.read_write_lock("share");
  ra.lock_shared();
  EXPECT_TRUE(rb.try_lock_shared());
  EXPECT_TRUE(ra.read_lock().is_locked());
  EXPECT_FALSE(ra.write_lock().is_locked());
  EXPECT_FALSE(rc.try_lock()) << "a writer must not get in while anyone reads";
  EXPECT_EQ(c.command("HGET", "share", "mode").as_string(), "read");
  ra.unlock_shared();
  rb.unlock_shared();
  EXPECT_EQ(c.command("EXISTS", "share").as_integer(), 0);
}

TEST(ReadWriteLock, AWriterExcludesReadersAndOtherWriters) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  ReadWriteLock wa = a.read_write_lock("excl");
  ReadWriteLock wb = b.read_write_lock("excl");
  wa.lock();
  EXPECT_FALSE(wb.try_lock_shared());
  EXPECT_FALSE(wb.try_lock());
  EXPECT_FALSE(on_other_thread([&] { return wa.try_lock_shared(); }))
      << "another thread of the writer's Client is another owner";
  EXPECT_TRUE(wa.write_lock().is_locked());
  EXPECT_FALSE(wa.read_lock().is_locked());
  wa.unlock();
  EXPECT_TRUE(wb.try_lock());
  wb.unlock();
}

TEST(ReadWriteLock, AWriterWaitsForTheLastReader) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server)), w(options_for(server));
  ReadWriteLock ra = a.read_write_lock("last-reader");
  ReadWriteLock rb = b.read_write_lock("last-reader");
  ReadWriteLock rw = w.read_write_lock("last-reader");
  ra.lock_shared();
  rb.lock_shared();
  const long long before = evalsha_calls(w);
  // The wait is longer than the readers' 30 s leases: only the last reader's
  // unlock message can let the writer in within the 20 s bound below.
  auto writer = std::async(std::launch::async, [&] {
    const bool got = rw.try_lock_for(60s);
    const bool readers_left = rw.read_lock().is_locked();
    if (got) rw.unlock();
    return std::pair(got, readers_left);
  });
  // An attempt, the subscription, a second attempt: the writer waits.
  ASSERT_TRUE(eventually([&] { return evalsha_calls(w) - before >= 2; }, 20s));
  ra.unlock_shared();
  EXPECT_EQ(writer.wait_for(0s), std::future_status::timeout);
  EXPECT_TRUE(rb.read_lock().is_locked()) << "the second reader still reads";
  rb.unlock_shared();
  ASSERT_EQ(writer.wait_for(20s), std::future_status::ready);
  const auto [got, readers_left] = writer.get();
  EXPECT_TRUE(got);
  EXPECT_FALSE(readers_left);
}

TEST(ReadWriteLock, ReadersWaitingBehindAWriterAllGetInTogetherWhenItUnlocks) {
  RedisServer server;
  Client w(options_for(server)), readers(options_for(server)), other(options_for(server));
  ReadWriteLock writer = w.read_write_lock("behind");
  writer.lock();
  constexpr int kReaders = 3;
  Meeting all_in(kReaders + 1);
  const long long before = evalsha_calls(w);
  std::vector<std::future<bool>> got;
  for (int i = 0; i < kReaders; ++i) {
    // Same Client: one unlock message must wake all its read waiters. A
    // reader not woken would sleep until the writer's 30 s lease ran out,
    // past the 20 s bounds of the meeting.
    got.push_back(std::async(std::launch::async, [&] {
      ReadWriteLock r = readers.read_write_lock("behind");
      if (!r.try_lock_shared_for(60s)) return false;
      const bool met = all_in.arrive_and_wait(20s);
      r.unlock_shared();
      return met;
    }));
  }
  // Each waiter attempts, subscribes, then attempts again: after 2 attempts
  // each, all are waiting on the channel (a reader joining the channel
  // another already confirmed reads again too: 4a3e5d4; before it, this
  // count once stayed short for 20 s).
  ASSERT_TRUE(eventually([&] { return evalsha_calls(w) - before >= 2 * kReaders; }, 20s));
  ReadWriteLock late = other.read_write_lock("behind");
  EXPECT_FALSE(late.try_lock_shared()) << "still write-held";
  writer.unlock();
  EXPECT_TRUE(all_in.arrive_and_wait(20s)) << "the readers were not all in at once";
  for (auto& g : got) EXPECT_TRUE(g.get());
}

TEST(ReadWriteLock, BothSidesAreReentrant) {
  RedisServer server;
  Client client(options_for(server));
  ReadWriteLock rw = client.read_write_lock("reenter");
  rw.lock_shared();
  rw.lock_shared();
  EXPECT_EQ(rw.read_lock().hold_count(), 2u);
  EXPECT_EQ(key_count(client, "{reenter}:*:rwlock_timeout:*"), 2u) << "one lease per read hold";
  rw.unlock_shared();
  EXPECT_EQ(rw.read_lock().hold_count(), 1u);
  EXPECT_EQ(key_count(client, "{reenter}:*:rwlock_timeout:*"), 1u);
  rw.unlock_shared();
  EXPECT_EQ(client.command("EXISTS", "reenter").as_integer(), 0);
  rw.lock();
  EXPECT_TRUE(rw.try_lock());
  EXPECT_EQ(rw.write_lock().hold_count(), 2u);
  rw.unlock();
  EXPECT_TRUE(rw.write_lock().is_locked());
  rw.unlock();
  EXPECT_EQ(client.command("EXISTS", "reenter").as_integer(), 0);
}

TEST(ReadWriteLock, UpgradeFromReadToWriteIsRefusedAtOnceAndChangesNothing) {
  RedisServer server;
  Client client(options_for(server));
  ReadWriteLock rw = client.read_write_lock("upgrade");
  rw.lock_shared();
  const auto before = client.command("HGETALL", "upgrade").to_string();
  // ASSERT first: were try_lock not refused, lock() below would hang.
  ASSERT_THROW(rw.try_lock(), Error);
  ASSERT_THROW(rw.try_lock_for(30s), Error) << "must not wait 30 s for itself";
  EXPECT_THROW(rw.lock(), Error);
  try {
    rw.lock();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
    EXPECT_NE(std::string(e.what()).find("read"), std::string::npos) << e.what();
  }
  std::error_code ec;
  EXPECT_FALSE(rw.try_lock_for(30s, ec));
  EXPECT_EQ(ec, make_error_code(errc::invalid_argument));
  EXPECT_EQ(client.command("HGETALL", "upgrade").to_string(), before);
  EXPECT_EQ(rw.read_lock().hold_count(), 1u);
  rw.unlock_shared();
  EXPECT_EQ(client.command("EXISTS", "upgrade").as_integer(), 0);
}

TEST(ReadWriteLock, AWriterDowngradesAndWaitingReadersGetIn) {
  RedisServer server;
  Client client(options_for(server)), other(options_for(server));
  ReadWriteLock rw = client.read_write_lock("down");
  ReadWriteLock peer = other.read_write_lock("down");
  rw.lock();
  rw.lock_shared();
  EXPECT_TRUE(rw.read_lock().is_locked());
  const long long before = evalsha_calls(client);
  // Woken by the downgrade's message within 20 s, not by the 30 s lease.
  auto reader = std::async(std::launch::async, [&] {
    const bool got = peer.try_lock_shared_for(60s);
    if (got) peer.unlock_shared();
    return got;
  });
  ASSERT_TRUE(eventually([&] { return evalsha_calls(client) - before >= 2; }, 20s));
  EXPECT_FALSE(peer.try_lock()) << "write-held";
  rw.unlock();
  ASSERT_EQ(reader.wait_for(20s), std::future_status::ready);
  EXPECT_TRUE(reader.get()) << "after the downgrade other readers get in";
  EXPECT_EQ(client.command("HGET", "down", "mode").as_string(), "read");
  EXPECT_EQ(rw.read_lock().hold_count(), 1u) << "the former writer still reads";
  EXPECT_FALSE(peer.try_lock()) << "a writer still waits for the downgraded reader";
  rw.unlock_shared();
  EXPECT_TRUE(peer.try_lock());
  peer.unlock();
}

TEST(ReadWriteLock, WorksWithStdSharedLockAndUniqueLock) {
  RedisServer server;
  Client client(options_for(server)), other(options_for(server));
  ReadWriteLock rw = client.read_write_lock("std");
  ReadWriteLock peer = other.read_write_lock("std");
  {
    std::shared_lock shared(rw);
    EXPECT_TRUE(shared.owns_lock());
    EXPECT_TRUE(peer.try_lock_shared());
    peer.unlock_shared();
  }
  {
    std::unique_lock exclusive(rw, std::defer_lock);
    EXPECT_TRUE(exclusive.try_lock_for(1s));
    EXPECT_FALSE(peer.try_lock_shared());
  }
  {
    std::shared_lock shared(rw, std::defer_lock);
    EXPECT_TRUE(shared.try_lock_until(std::chrono::system_clock::now() + 1s));
  }
  EXPECT_EQ(client.command("EXISTS", "std").as_integer(), 0);
}

TEST(ReadWriteLock, WriteSideFencingTokensStrictlyIncrease) {
  RedisServer server;
  Client a(options_for(server)), b(options_for(server));
  ReadWriteLock fa = a.fenced_read_write_lock("fence");
  ReadWriteLock fb = b.fenced_read_write_lock("fence");
  EXPECT_TRUE(fa.fenced());
  std::uint64_t last = 0;
  for (int i = 0; i < 4; ++i) {
    ReadWriteLock& w = i % 2 ? fb : fa;
    w.lock();
    const auto token = w.fencing_token();
    ASSERT_TRUE(token.has_value());
    EXPECT_GT(*token, last);
    w.lock();
    EXPECT_EQ(w.fencing_token(), token) << "a re-entry keeps its token";
    w.unlock();
    w.unlock();
    last = *token;
    fa.lock_shared();  // reads in between take no token
    fa.unlock_shared();
  }
  auto lease = fb.write_lock().acquire();
  ASSERT_TRUE(lease.fencing_token().has_value());
  EXPECT_GT(*lease.fencing_token(), last);
}

TEST(ReadWriteLock, ReadLeasesAreHandleOwnedAndShare) {
  RedisServer server;
  Client client(options_for(server));
  ReadWriteLock rw = client.read_write_lock("leases");
  Lease one = rw.read_lock().acquire();
  auto two = rw.read_lock().try_acquire();
  ASSERT_TRUE(two.has_value());
  EXPECT_FALSE(rw.write_lock().try_acquire().has_value());
  one.release();
  EXPECT_FALSE(rw.write_lock().try_acquire().has_value());
  two->release();
  auto write = rw.write_lock().try_acquire();
  ASSERT_TRUE(write.has_value());
  EXPECT_FALSE(rw.read_lock().try_acquire().has_value());
}

TEST(ReadWriteLock, ReadHoldsAreRenewedByTheWatchdog) {
  RedisServer server;
  Client client(options_for(server, 300ms)), other(options_for(server));
  ReadWriteLock rw = client.read_write_lock("renewed");
  rw.lock_shared();
  const auto first = rw.read_lock().lease_deadline();
  ASSERT_TRUE(first.has_value());
  // Renewed past its first lease (three watchdog periods later it still holds).
  ASSERT_TRUE(eventually([&] { return *rw.read_lock().lease_deadline() > *first + 600ms; }, 20s));
  EXPECT_TRUE(rw.read_lock().lease_valid());
  EXPECT_EQ(key_count(other, "{renewed}:*:rwlock_timeout:1"), 1u);
  ReadWriteLock peer = other.read_write_lock("renewed");
  EXPECT_FALSE(peer.try_lock());
  rw.unlock_shared();
  EXPECT_TRUE(peer.try_lock());
  peer.unlock();
}

TEST(ReadWriteLock, AWriterRemovesReaderFieldsWhoseLeasesEnded) {
  RedisServer server;
  Client client(options_for(server));
  // A crashed reader's field in a hash some live reader kept renewing: its
  // own timeout key is gone.
  client.command("HSET", "ghost", "mode", "read", "dead-client:1", "1");
  client.command("PEXPIRE", "ghost", "60000");
  ReadWriteLock rw = client.read_write_lock("ghost");
  EXPECT_TRUE(rw.try_lock());
  EXPECT_EQ(client.command("HEXISTS", "ghost", "dead-client:1").as_integer(), 0);
  rw.unlock();
}

TEST(ReadWriteLock, AReaderWithALiveLeaseKeepsOutAWriter) {
  RedisServer server;
  Client client(options_for(server));
  client.command("HSET", "live", "mode", "read", "live-client:1", "2");
  client.command("SET", "{live}:live-client:1:rwlock_timeout:2", "1", "PX", "60000");
  client.command("PEXPIRE", "live", "60000");
  ReadWriteLock rw = client.read_write_lock("live");
  EXPECT_FALSE(rw.try_lock()) << "one of the reader's holds is still leased";
  EXPECT_EQ(client.command("HGET", "live", "live-client:1").as_string(), "2");
}

// The dead reader's lease is 1 s; the writer waits up to 10 min (no last
// attempt at its deadline can let it in) and the test gives it 20 s. The
// writer retries when the hash's TTL it was told has passed: a read hold
// that kept the hash (or its timeout key) past the reader's own lease would
// keep it out past the bound.
TEST(ReadWriteLock, ASigkilledReaderBlocksWritersOnlyUntilItsLeaseEnds) {
  RedisServer server;
  Client client(options_for(server, 10min));
  ReadWriteLock rw = client.read_write_lock("crashed");
  auto reader = test::ChildProcess::spawn(
      {DISTLOCK_LOCK_WORKER, "read-hold", server.uri(), "crashed", "1000"});
  ASSERT_TRUE(eventually([&] { return rw.read_lock().is_locked(); }, 20s));
  EXPECT_FALSE(rw.try_lock());
  reader.kill_and_reap();
  auto writer = std::async(std::launch::async, [&] {
    const bool got = rw.try_lock_for(10min);
    if (got) rw.unlock();
    return got;
  });
  const bool in_time = writer.wait_for(20s) == std::future_status::ready;
  if (!in_time) client.close();  // ends the wait (it then throws closed)
  ASSERT_TRUE(in_time) << "the dead reader still blocked the writer 20 s after the kill";
  EXPECT_TRUE(writer.get()) << "the dead reader's lease ends";
}

TEST(ReadWriteLock, ADeadReaderDoesNotEndALiveReadersHold) {
  RedisServer server;
  Client live(options_for(server, 600ms)), writer(options_for(server));
  ReadWriteLock reader = live.read_write_lock("dead-live");
  ReadWriteLock w = writer.read_write_lock("dead-live");
  auto dead = test::ChildProcess::spawn(
      {DISTLOCK_LOCK_WORKER, "read-hold", server.uri(), "dead-live", "600"});
  ASSERT_TRUE(eventually([&] { return reader.read_lock().is_locked(); }, 20s));
  reader.lock_shared();
  dead.kill_and_reap();
  // The dead reader's timeout key runs out; the live one's is renewed.
  ASSERT_TRUE(
      eventually([&] { return key_count(writer, "{dead-live}:*:rwlock_timeout:*") == 1; }, 20s));
  EXPECT_FALSE(w.try_lock_for(1500ms)) << "the live reader still holds";
  EXPECT_TRUE(reader.read_lock().lease_valid());
  EXPECT_EQ(reader.read_lock().hold_count(), 1u);
  auto got = std::async(std::launch::async, [&] {
    const bool ok = w.try_lock_for(20s);
    if (ok) w.unlock();
    return ok;
  });
  reader.unlock_shared();
  EXPECT_TRUE(got.get()) << "the last live reader's unlock lets the writer in";
}

TEST(ReadWriteLock, UnlockWithoutAHoldReportsNotOwnerAndNeverThrows) {
  RedisServer server;
  Client client(options_for(server));
  ReadWriteLock rw = client.read_write_lock("nohold");
  rw.unlock();
  rw.unlock_shared();
  std::error_code ec;
  rw.unlock(ec);
  EXPECT_EQ(ec, make_error_code(errc::not_owner));
  rw.unlock_shared(ec);
  EXPECT_EQ(ec, make_error_code(errc::not_owner));
  rw.lock_shared();
  rw.unlock(ec);
  EXPECT_EQ(ec, make_error_code(errc::not_owner)) << "a read hold is not a write hold";
  rw.unlock_shared();
}

}  // namespace
}  // namespace distlock
