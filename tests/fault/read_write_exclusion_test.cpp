// The mutual-exclusion checker over the read-write lock's write side, with
// readers checking that no writer is inside while they read.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "distlock/distlock.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

TEST(ReadWriteExclusion, TwoProcessesOfEightThreadsNeverOverlapWritersNorLetAReaderInWithAWriter) {
  RedisServer server;
  const std::string dir = test::make_temp_dir("distlock-fault-");
  constexpr int kProcesses = 2;
  constexpr int kNames = 2;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::filesystem::path> files;
  for (int p = 0; p < kProcesses; ++p) {
    files.push_back(dir + "/worker-" + std::to_string(p) + ".history");
    // 8 threads (2 readers, 6 writers), 10 s watchdog lease, 5 s command
    // timeout, 5 s run, read-write locks.
    workers.push_back(std::make_unique<Worker>(std::vector<std::string>{
        DISTLOCK_FAULT_WORKER, "history", server.uri(), std::to_string(p + 1), "8",
        std::to_string(kNames), files.back().string(), "10000", "5000", "5000", "rw"}));
  }
  long ops = 0;
  long increments = 0;
  long reads = 0;
  for (auto& w : workers) {
    const auto line = w->read_line(60s);
    ASSERT_TRUE(line.has_value()) << "a worker did not finish";
    std::printf("[read-write exclusion] worker: %s\n", line->c_str());
    ops += std::stol(field(*line, "ops"));
    increments += std::stol(field(*line, "increments"));
    reads += std::stol(field(*line, "reads"));
    EXPECT_EQ(field(*line, "errors"), "0");
    EXPECT_EQ(field(*line, "lost"), "0");
    EXPECT_EQ(field(*line, "read_overlaps"), "0") << "a reader saw a writer inside";
    const auto status = w->process().wait_for_exit(30s);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);
  }
  const auto records = test::read_history(files);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(ops));
  const auto result = check_and_print("read-write, 2 processes x 8 threads", records);
  EXPECT_TRUE(result.ok()) << result.report();
  EXPECT_EQ(result.names_checked, static_cast<std::size_t>(kNames));
  EXPECT_GT(ops, 200) << "too few write holds to prove anything";
  EXPECT_GT(reads, 50) << "too few reads to prove anything";
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
