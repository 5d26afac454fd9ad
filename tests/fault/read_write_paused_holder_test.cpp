// A read-write lock's holder process stalls (SIGSTOP: a GC pause, a
// swapped-out process) past its lease: the hold runs out on the server, the
// other side gets in, and the resumed holder is told it lost the lock.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "distlock/distlock.hpp"
#include "distlock/fencing.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

// The paused worker's report once resumed: not valid, told, and its late
// unlock lease_lost.
void expect_told_it_lost(const std::string& result) {
  EXPECT_EQ(field(result, "stop"), "1") << "the resumed holder was not told it lost the lock";
  EXPECT_EQ(field(result, "valid"), "0");
  EXPECT_EQ(field(result, "unlock"), "lease_lost");
}

// The worker's write hold has a 1 s watchdog lease; once it is stopped,
// nobody renews it. The test's reader and then its writer wait up to 30 s,
// a generous bound over that second (their Client's own lease is 10 min).
TEST(ReadWritePausedHolder,
     AWriterPausedPastItsLeaseLosesItToAReaderAndAWriterAndIsToldOnResuming) {
  RedisServer server;
  const std::string dir = test::make_temp_dir("distlock-fault-");
  const std::string name = "rw-stalled-writer";
  const std::string data = name + ":data";
  Worker worker({DISTLOCK_FAULT_WORKER, "hold-fenced", server.uri(), name, "1000", data,
                 dir + "/writer.history", "rw-write"});
  const auto acquired = worker.read_line(20s);
  ASSERT_TRUE(acquired.has_value()) << "the worker did not take the write lock";
  const std::uint64_t stale_token = std::stoull(field(*acquired, "token"));

  worker.process().signal(SIGSTOP);
  ASSERT_TRUE(worker.process().wait_for_stopped(5s));

  Client client(options_for(server, 10min, "new-holder"));
  ReadWriteLock rw = client.fenced_read_write_lock(name);
  ASSERT_TRUE(rw.try_lock_shared_for(30s)) << "the stalled writer's lease never ran out";
  rw.unlock_shared();
  ASSERT_TRUE(rw.try_lock_for(30s)) << "a writer did not get in after the stalled writer";
  const auto token = rw.fencing_token();
  ASSERT_TRUE(token.has_value());
  EXPECT_GT(*token, stale_token);
  EXPECT_TRUE(fenced_set(client, data, "new writer's write", *token));

  worker.process().signal(SIGUSR1);
  worker.process().signal(SIGCONT);
  const auto result = worker.read_line(30s);
  ASSERT_TRUE(result.has_value()) << "the resumed worker reported nothing";
  std::printf("[paused rw writer] token %llu then %llu; %s\n",
              static_cast<unsigned long long>(stale_token), static_cast<unsigned long long>(*token),
              result->c_str());
  EXPECT_EQ(field(*result, "written"), "0") << "the stale write was accepted";
  expect_told_it_lost(*result);
  const auto status = worker.process().wait_for_exit(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);
  EXPECT_EQ(client.command("GET", data).as_string(), "new writer's write");
  EXPECT_TRUE(rw.write_lock().is_held_by_current_thread()) << "the stale unlock freed it";
  rw.unlock();
  std::filesystem::remove_all(dir);
}

// The worker's read hold has a 1 s watchdog lease: once it is stopped, its
// timeout key and the hash run out, and a writer (waiting up to 30 s, with a
// 10 min lease of its own) gets in.
TEST(ReadWritePausedHolder, AReaderPausedPastItsLeaseLosesItToAWriterAndIsToldOnResuming) {
  RedisServer server;
  const std::string dir = test::make_temp_dir("distlock-fault-");
  const std::string name = "rw-stalled-reader";
  Worker worker({DISTLOCK_FAULT_WORKER, "hold-fenced", server.uri(), name, "1000", name + ":data",
                 dir + "/reader.history", "rw-read"});
  ASSERT_TRUE(worker.read_line(20s).has_value()) << "the worker did not take the read lock";

  Client client(options_for(server, 10min, "writer"));
  ReadWriteLock rw = client.fenced_read_write_lock(name);
  ASSERT_FALSE(rw.try_lock()) << "the worker's read hold let a writer in";
  worker.process().signal(SIGSTOP);
  ASSERT_TRUE(worker.process().wait_for_stopped(5s));

  ASSERT_TRUE(rw.try_lock_for(30s)) << "the stalled reader's lease never ran out";

  worker.process().signal(SIGUSR1);
  worker.process().signal(SIGCONT);
  const auto result = worker.read_line(30s);
  ASSERT_TRUE(result.has_value()) << "the resumed worker reported nothing";
  std::printf("[paused rw reader] %s\n", result->c_str());
  expect_told_it_lost(*result);
  const auto status = worker.process().wait_for_exit(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);
  EXPECT_TRUE(rw.write_lock().is_held_by_current_thread()) << "the stale unlock freed it";
  EXPECT_EQ(client.command("HGET", name, "mode").as_string(), "write");
  rw.unlock();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distlock::fault
