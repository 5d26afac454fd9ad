// A holder process stalls (SIGSTOP: a GC pause, a swapped-out process) past
// its lease, then resumes and makes the write it was about to make.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>

#include "distlock/distlock.hpp"
#include "distlock/fencing.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

TEST(PausedHolder, PastItsLeaseLosesTheLockToAnotherProcessAndItsStaleFencedWriteIsRejected) {
  RedisServer server;
  const std::string dir = test::make_temp_dir("distlock-fault-");
  const std::string history = dir + "/paused-holder.history";
  const std::string name = "stalled";
  const std::string data = "stalled:data";
  // Watchdog lease of 1 s: once stalled, nobody renews it.
  Worker worker({DISTLOCK_FAULT_WORKER, "hold-fenced", server.uri(), name, "1000", data, history});
  const auto acquired = worker.read_line(20s);
  ASSERT_TRUE(acquired.has_value()) << "the worker did not take the lock";
  const std::uint64_t stale_token = std::stoull(field(*acquired, "token"));

  worker.process().signal(SIGSTOP);
  ASSERT_TRUE(worker.process().wait_for_stopped(5s));

  Client client(options_for(server, 10s, "new-holder"));
  Lock lock = client.fenced_lock(name);
  ASSERT_TRUE(lock.try_lock_for(30s)) << "the stalled holder's lease never ran out";
  test::HoldRecord mine = entering(name, 2, lock.fencing_token());
  ASSERT_TRUE(mine.fencing_token.has_value());
  EXPECT_GT(*mine.fencing_token, stale_token);
  EXPECT_TRUE(fenced_set(client, data, "new holder's write", *mine.fencing_token));

  // Resume it straight into its write (the signal waits while it is stopped).
  worker.process().signal(SIGUSR1);
  worker.process().signal(SIGCONT);
  const auto result = worker.read_line(30s);
  ASSERT_TRUE(result.has_value()) << "the resumed worker reported nothing";
  std::printf("[paused holder] token %llu then %llu; %s\n",
              static_cast<unsigned long long>(stale_token),
              static_cast<unsigned long long>(*mine.fencing_token), result->c_str());
  EXPECT_EQ(field(*result, "write_error"), "none");
  EXPECT_EQ(field(*result, "written"), "0") << "the stale write was accepted";
  EXPECT_EQ(field(*result, "stop"), "1") << "the resumed holder was not told it lost the lock";
  EXPECT_EQ(field(*result, "valid"), "0");
  EXPECT_EQ(field(*result, "unlock"), "lease_lost");
  const auto status = worker.process().wait_for_exit(30s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);

  EXPECT_EQ(client.command("GET", data).as_string(), "new holder's write");
  EXPECT_TRUE(lock.is_held_by_current_thread()) << "the stale unlock freed the new holder's lock";
  mine.exit_ns = test::steady_now_ns();
  EXPECT_TRUE(lock.lease_valid());
  lock.unlock();

  std::vector<test::HoldRecord> records = test::read_history({history});
  ASSERT_EQ(records.size(), 1u);
  records.push_back(mine);
  const auto checked = check_and_print("paused holder, leases", records);
  EXPECT_TRUE(checked.ok()) << checked.report();
  const auto physical =
      check_and_print("paused holder, ignoring leases", ignoring_leases(records), false);
  EXPECT_EQ(physical.overlap_count, 1u)
      << "the stalled holder was inside (its write) while the new one held the lock";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distlock::fault
