#include "fault/history_run.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>

#include "fault/fault_support.hpp"
#include "support/process.hpp"

namespace distlock::fault {

using namespace std::chrono_literals;

HistoryRunResult run_history(const test::RedisServer& server, const HistoryRunSpec& spec) {
  HistoryRunResult out;
  const std::string dir = test::make_temp_dir("distlock-fault-");
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::filesystem::path> files;
  for (int p = 0; p < spec.processes; ++p) {
    files.push_back(dir + "/worker-" + std::to_string(p) + ".history");
    std::vector<std::string> argv{DISTLOCK_FAULT_WORKER,
                                  spec.mode,
                                  server.uri(),
                                  std::to_string(p + 1),
                                  std::to_string(spec.threads),
                                  std::to_string(spec.names),
                                  files.back().string(),
                                  "10000",
                                  "5000",
                                  std::to_string(spec.duration_ms)};
    argv.insert(argv.end(), spec.extra.begin(), spec.extra.end());
    workers.push_back(std::make_unique<Worker>(argv));
  }
  const auto bound = std::chrono::milliseconds(spec.duration_ms) + 60s;
  for (auto& w : workers) {
    const auto line = w->read_line(bound);
    EXPECT_TRUE(line.has_value()) << "a worker did not finish";
    if (!line) continue;
    std::printf("[%s] worker: %s\n", spec.label.c_str(), line->c_str());
    out.ops += std::stol(field(*line, "ops"));
    out.increments += std::stol(field(*line, "increments"));
    const std::string reads = field(*line, "reads");
    out.reads += reads.empty() ? 0 : std::stol(reads);
    EXPECT_EQ(field(*line, "errors"), "0");
    EXPECT_EQ(field(*line, "lost"), "0");
    const std::string read_overlaps = field(*line, "read_overlaps");
    EXPECT_TRUE(read_overlaps.empty() || read_overlaps == "0") << "a reader saw a writer inside";
    const auto status = w->process().wait_for_exit(30s);
    EXPECT_TRUE(status.has_value()) << "a worker did not exit";
    if (status) {
      EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);
    }
  }
  const auto records = test::read_history(files);
  EXPECT_EQ(records.size(), static_cast<std::size_t>(out.ops)) << "every hold was recorded";
  out.check = check_and_print(spec.label, records);
  EXPECT_TRUE(out.check.ok()) << out.check.report();
  EXPECT_EQ(out.check.operations_checked, records.size());
  // A second, independent witness: the non-atomic increments lost nothing.
  long long counted = 0;
  for (int n = 0; n < spec.names; ++n) {
    const std::string v = server.cli({"GET", "counter:mx:" + std::to_string(n)});
    counted += v.empty() ? 0 : std::stoll(v);
  }
  EXPECT_EQ(counted, out.increments);
  std::filesystem::remove_all(dir);
  return out;
}

}  // namespace distlock::fault
