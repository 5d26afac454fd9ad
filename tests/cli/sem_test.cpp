// `distlock sem run`: at most N commands at once across processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "cli/cli_support.hpp"

namespace distlock::test {
namespace {

using std::chrono::seconds;

class SemRun : public ::testing::Test, public CliTest {
 protected:
  RedisServer server_;
};

TEST_F(SemRun, WithTwoPermitsFiveCommandsAllRunTwoAtOnceButNeverThree) {
  const std::string log = path("log");
  // Each command logs its start, marks itself inside, waits for path("go"),
  // logs its end. The log's line order is the order of the events.
  const std::string body = "echo start >> " + log + "; touch " + path("in.") + "$$; " +
                           wait_for(path("go")) + "echo end >> " + log;
  const long long before = script_calls(server_);
  std::vector<ToolRun> runs;
  for (int i = 0; i < 5; ++i) {
    // 10 min leases: no permit is given back by expiry, and a waiter's
    // fallback retry (a third of a lease) does not come within the test.
    runs.push_back(start({"sem", "run", "pool", "--permits", "2", "--watchdog", "10m", "--uri",
                          server_.uri(), "--", "sh", "-c", body}));
  }
  const auto inside = [&] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(path(""))) {
      n += e.path().filename().string().starts_with("in.");
    }
    return n;
  };
  // Two commands inside at once: a sem run that serialised would never get here.
  ASSERT_TRUE(eventually([&] { return inside() == 2; }, seconds(20))) << inside() << " inside";
  // The other three wait: each subscribed to the semaphore's channel after
  // an attempt that found no permit, and made its attempt after subscribing
  // (script calls: 5 try_set_permits, 2 acquires, 3 x 2 attempts).
  ASSERT_TRUE(eventually(
      [&] {
        return subscribers(server_, "redisson_sc:{pool}") == 3 &&
               script_calls(server_) >= before + 13;
      },
      seconds(20)));
  EXPECT_EQ(inside(), 2) << "a third command got a permit";
  EXPECT_EQ(server_.cli({"GET", "pool"}), "0");
  touch(path("go"));
  for (auto& r : runs) {
    const ToolResult result = finish(r);
    EXPECT_EQ(result.status, 0) << result.err;
  }
  std::istringstream in(read_file(log));
  int starts = 0, ends = 0, running = 0, most = 0;
  for (std::string what; in >> what;) {
    running += what == "start" ? 1 : -1;
    starts += what == "start";
    ends += what == "end";
    most = std::max(most, running);
  }
  EXPECT_EQ(starts, 5) << "every command ran";
  EXPECT_EQ(ends, 5);
  EXPECT_EQ(most, 2) << read_file(log);
  EXPECT_EQ(server_.cli({"GET", "pool"}), "2") << "every permit was given back";
}

TEST_F(SemRun, APermitLostWhileTheCommandRunsSendsItSigtermAndExits76) {
  // The command exits 0 on SIGTERM, so 76 is distlock's own. --kill-after is
  // 10 min: only the SIGTERM can have ended it.
  const std::string body = "trap 'touch " + path("term") + "; exit 0' TERM; touch " +
                           path("started") + "; " + wait_for(path("never"));
  ToolRun r = start({"sem", "run", "lost", "--permits", "1", "--watchdog", "1s", "--kill-after",
                     "10m", "--uri", server_.uri(), "--", "sh", "-c", body});
  ASSERT_TRUE(eventually([&] { return file_exists(path("started")); }, seconds(20)));
  // The holder's lease is gone from the server: its next renewal (every
  // third of the 1 s watchdog) finds it lost.
  // (One permit: its holder has no field in distlock_sem_counts.)
  ASSERT_EQ(server_.cli({"DEL", "distlock_sem_holders:{lost}", "distlock_sem_counts:{lost}"}), "1");
  EXPECT_TRUE(eventually([&] { return file_exists(path("term")); }, seconds(20)))
      << "the command never got SIGTERM";
  const ToolResult result = finish(r, seconds(30));
  EXPECT_EQ(result.status, 76) << result.err;
  EXPECT_NE(result.err.find("lease lost"), std::string::npos) << result.err;
}

TEST_F(SemRun, WaitZeroWithNoPermitLeftExits75) {
  ToolRun holder = start({"sem", "run", "one", "--permits", "1", "--uri", server_.uri(), "--", "sh",
                          "-c", "touch " + path("held") + "; " + wait_for(path("go"))});
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(20)));
  const ToolResult r = run({"sem", "run", "one", "--permits", "1", "--wait", "0", "--uri",
                            server_.uri(), "--", "touch", path("ran")});
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_FALSE(file_exists(path("ran")));
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
}

TEST_F(SemRun, TheCommandsExitCodePassesThrough) {
  EXPECT_EQ(
      run({"sem", "run", "s", "--permits", "3", "--uri", server_.uri(), "--", "sh", "-c", "exit 9"})
          .status,
      9);
}

}  // namespace
}  // namespace distlock::test
