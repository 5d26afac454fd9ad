// The semaphore's bound across processes (issue 12): 3 processes of 3
// threads share 2 permits; a sweep over the recorded stays proves that never
// more than 2 were inside at once, and every round completes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <utility>

#include "distlock/distlock.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

// The most stays of `records` that overlap at any instant (a stay is
// [enter, exit]; one that ends as another enters counts as overlapping).
int most_inside(const std::vector<test::HoldRecord>& records) {
  std::vector<std::pair<std::int64_t, int>> events;  // (time, +1 enter / -1 exit)
  for (const auto& r : records) {
    events.emplace_back(r.enter_ns, +1);
    events.emplace_back(r.exit_ns, -1);
  }
  // Enters before exits at the same instant: ties count as overlaps.
  std::sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  int inside = 0, most = 0;
  for (const auto& e : events) most = std::max(most, inside += e.second);
  return most;
}

TEST(SemaphoreExclusion, ThreeProcessesOfThreeThreadsOnTwoPermitsNeverHaveMoreThanTwoInside) {
  RedisServer server;
  {
    Client c(ClientOptions::from_uri(server.uri()));
    ASSERT_TRUE(c.semaphore("sem-mx").try_set_permits(2));
  }
  const std::string dir = test::make_temp_dir("distlock-fault-");
  constexpr int kProcesses = 3, kThreads = 3, kRounds = 60;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::filesystem::path> files;
  for (int p = 0; p < kProcesses; ++p) {
    files.push_back(dir + "/sem-" + std::to_string(p) + ".history");
    workers.push_back(std::make_unique<Worker>(std::vector<std::string>{
        DISTLOCK_FAULT_WORKER, "semaphore-history", server.uri(), std::to_string(p + 1),
        std::to_string(kThreads), std::to_string(kRounds), files.back().string()}));
  }
  for (auto& w : workers) {
    const auto line = w->read_line(180s);
    ASSERT_TRUE(line.has_value()) << "a worker did not finish";
    EXPECT_EQ(field(*line, "ops"), std::to_string(kThreads * kRounds)) << *line;
    EXPECT_EQ(field(*line, "errors"), "0") << *line;
    const auto status = w->process().wait_for_exit(30s);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);
  }
  const auto records = test::read_history(files);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(kProcesses * kThreads * kRounds));
  const int most = most_inside(records);
  std::printf("[semaphore exclusion] %zu stays, at most %d inside at once\n", records.size(), most);
  EXPECT_LE(most, 2);
  EXPECT_EQ(most, 2) << "the two permits were never both in use: the test proves little";
  Client c(ClientOptions::from_uri(server.uri()));
  EXPECT_EQ(c.semaphore("sem-mx").available_permits(), 2) << "every permit came back";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distlock::fault
