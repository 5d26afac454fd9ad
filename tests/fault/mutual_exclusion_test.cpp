// The mutual-exclusion checker over a recorded history: 4 processes of 8
// threads take 4 fenced locks for about 10 s, recording every hold.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "distlock/distlock.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

TEST(MutualExclusion, FourProcessesOfEightThreadsForTenSecondsNeverOverlapAndTokensIncrease) {
  RedisServer server;
  const std::string dir = test::make_temp_dir("distlock-fault-");
  constexpr int kProcesses = 4;
  constexpr int kNames = 4;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::filesystem::path> files;
  for (int p = 0; p < kProcesses; ++p) {
    files.push_back(dir + "/worker-" + std::to_string(p) + ".history");
    // 8 threads, 10 s watchdog lease, 5 s command timeout, 10 s run.
    workers.push_back(std::make_unique<Worker>(std::vector<std::string>{
        DISTLOCK_FAULT_WORKER, "history", server.uri(), std::to_string(p + 1), "8",
        std::to_string(kNames), files.back().string(), "10000", "5000", "10000"}));
  }
  long ops = 0;
  long increments = 0;
  for (auto& w : workers) {
    const auto line = w->read_line(60s);
    ASSERT_TRUE(line.has_value()) << "a worker did not finish";
    std::printf("[mutual exclusion] worker: %s\n", line->c_str());
    ops += std::stol(field(*line, "ops"));
    increments += std::stol(field(*line, "increments"));
    EXPECT_EQ(field(*line, "errors"), "0");
    EXPECT_EQ(field(*line, "lost"), "0");
    const auto status = w->process().wait_for_exit(30s);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);
  }
  const auto records = test::read_history(files);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(ops));
  const auto result = check_and_print("4 processes x 8 threads", records);
  EXPECT_TRUE(result.ok()) << result.report();
  EXPECT_EQ(result.operations_checked, records.size());
  EXPECT_EQ(result.names_checked, static_cast<std::size_t>(kNames));
  EXPECT_GT(ops, 1000) << "too few holds to prove anything";

  // A second, independent witness: the non-atomic increments lost nothing.
  long long counted = 0;
  for (int n = 0; n < kNames; ++n) {
    const std::string v = server.cli({"GET", "counter:mx:" + std::to_string(n)});
    counted += v.empty() ? 0 : std::stoll(v);
  }
  EXPECT_EQ(counted, increments);
  std::filesystem::remove_all(dir);
}

TEST(MutualExclusion, TwoProcessesOfEightThreadsOnFairLocksForFiveSecondsNeverOverlap) {
  RedisServer server;
  const std::string dir = test::make_temp_dir("distlock-fault-");
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::filesystem::path> files;
  for (int p = 0; p < 2; ++p) {
    files.push_back(dir + "/fair-" + std::to_string(p) + ".history");
    // 8 threads on 2 fenced fair locks, 10 s watchdog lease, 5 s command timeout, 5 s run.
    workers.push_back(std::make_unique<Worker>(std::vector<std::string>{
        DISTLOCK_FAULT_WORKER, "history-fair", server.uri(), std::to_string(p + 1), "8", "2",
        files.back().string(), "10000", "5000", "5000"}));
  }
  long ops = 0;
  long increments = 0;
  for (auto& w : workers) {
    const auto line = w->read_line(60s);
    ASSERT_TRUE(line.has_value()) << "a worker did not finish";
    ops += std::stol(field(*line, "ops"));
    increments += std::stol(field(*line, "increments"));
    EXPECT_EQ(field(*line, "errors"), "0");
    EXPECT_EQ(field(*line, "lost"), "0");
    const auto status = w->process().wait_for_exit(30s);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);
  }
  const auto records = test::read_history(files);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(ops));
  const auto result = check_and_print("fair: 2 processes x 8 threads", records);
  EXPECT_TRUE(result.ok()) << result.report();
  EXPECT_GT(ops, 100) << "too few holds to prove anything";
  long long counted = 0;
  for (int n = 0; n < 2; ++n) {
    const std::string v = server.cli({"GET", "counter:mx:" + std::to_string(n)});
    counted += v.empty() ? 0 : std::stoll(v);
  }
  EXPECT_EQ(counted, increments);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distlock::fault
