// `distlock sem run`: at most N commands at once across processes.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "cli/cli_support.hpp"

namespace distlock::test {
namespace {

using std::chrono::seconds;

class SemRun : public ::testing::Test, public CliTest {
 protected:
  RedisServer server_;
};

TEST_F(SemRun, WithTwoPermitsFiveConcurrentCommandsAllRunAndNeverMoreThanTwoAtOnce) {
  const std::string log = path("log");
  // Each command logs its start, holds its permit a while, logs its end.
  const std::string body =
      "echo start $(date +%s%N) >> " + log + "; sleep 0.3; echo end $(date +%s%N) >> " + log;
  std::vector<ToolRun> runs;
  for (int i = 0; i < 5; ++i) {
    runs.push_back(start(
        {"sem", "run", "pool", "--permits", "2", "--uri", server_.uri(), "--", "sh", "-c", body}));
  }
  for (auto& r : runs) {
    const ToolResult result = finish(r);
    EXPECT_EQ(result.status, 0) << result.err;
  }
  std::vector<std::pair<long long, int>> changes;  // (time, +1 start / -1 end)
  std::istringstream in(read_file(log));
  std::string what;
  long long ns = 0;
  int starts = 0;
  while (in >> what >> ns) {
    changes.emplace_back(ns, what == "start" ? 1 : -1);
    starts += what == "start";
  }
  EXPECT_EQ(starts, 5) << "every command ran";
  EXPECT_EQ(changes.size(), 10u);
  // Sorted by time, ends before starts at the same nanosecond.
  std::sort(changes.begin(), changes.end());
  int running = 0;
  int most = 0;
  for (const auto& [t, delta] : changes) {
    running += delta;
    most = std::max(most, running);
  }
  EXPECT_LE(most, 2) << read_file(log);
  EXPECT_EQ(server_.cli({"GET", "pool"}), "2") << "every permit was given back";
}

TEST_F(SemRun, WaitZeroWithNoPermitLeftExits75) {
  ToolRun holder =
      start({"sem", "run", "one", "--permits", "1", "--uri", server_.uri(), "--", "sh", "-c",
             "touch " + path("held") + "; while [ ! -e " + path("go") + " ]; do sleep 0.02; done"});
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
