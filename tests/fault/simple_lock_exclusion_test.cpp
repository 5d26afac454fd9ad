// The mutual-exclusion checker over the SET NX lock (SimpleLock): 3 processes
// of 6 threads take 3 fenced simple locks for about 5 s, recording every hold.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "distlock/distlock.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

TEST(SimpleLockExclusion, ThreeProcessesOfSixThreadsNeverOverlapAndTokensIncrease) {
  RedisServer server;
  const std::string dir = test::make_temp_dir("distlock-fault-");
  constexpr int kProcesses = 3;
  constexpr int kNames = 3;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::filesystem::path> files;
  for (int p = 0; p < kProcesses; ++p) {
    files.push_back(dir + "/worker-" + std::to_string(p) + ".history");
    // 6 threads, 10 s watchdog lease, 5 s command timeout, 5 s run, simple locks.
    workers.push_back(std::make_unique<Worker>(std::vector<std::string>{
        DISTLOCK_FAULT_WORKER, "history", server.uri(), std::to_string(p + 1), "6",
        std::to_string(kNames), files.back().string(), "10000", "5000", "5000", "simple"}));
  }
  long ops = 0;
  long increments = 0;
  for (auto& w : workers) {
    const auto line = w->read_line(60s);
    ASSERT_TRUE(line.has_value()) << "a worker did not finish";
    std::printf("[simple lock exclusion] worker: %s\n", line->c_str());
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
  const auto result = check_and_print("simple lock, 3 processes x 6 threads", records);
  EXPECT_TRUE(result.ok()) << result.report();
  EXPECT_EQ(result.operations_checked, records.size());
  EXPECT_EQ(result.names_checked, static_cast<std::size_t>(kNames));
  EXPECT_GT(ops, 500) << "too few holds to prove anything";

  // A second, independent witness: the non-atomic increments lost nothing.
  long long counted = 0;
  for (int n = 0; n < kNames; ++n) {
    const std::string v = server.cli({"GET", "counter:mx:" + std::to_string(n)});
    counted += v.empty() ? 0 : std::stoll(v);
  }
  EXPECT_EQ(counted, increments);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distlock::fault
