#include "fault/file_history.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include "support/process.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;
using fault::field;
using fault::Worker;

constexpr int kProcesses = 4;
constexpr int kThreads = 4;
constexpr int kNames = 3;

// The integer in the counter file of lock "mx:<n>": 0 while the file is
// missing; nullopt while it is empty (a worker is rewriting it) or holds
// anything else.
std::optional<long long> read_counter(const std::filesystem::path& dir, int n) {
  std::ifstream in(dir / ("mx:" + std::to_string(n)), std::ios::binary);
  if (!in) return 0;
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

HistoryRun::HistoryRun(const std::string& uri, std::string label, long duration_ms)
    : label_(std::move(label)),
      duration_ms_(duration_ms),
      dir_(make_temp_dir("distlock-history-")),
      counters_(dir_ / "counters") {
  std::filesystem::create_directory(counters_);
  for (int p = 0; p < kProcesses; ++p) {
    files_.push_back(dir_ / ("worker-" + std::to_string(p) + ".history"));
    workers_.push_back(std::make_unique<Worker>(std::vector<std::string>{
        DISTLOCK_FAULT_WORKER, "history-zk", uri, std::to_string(p + 1), std::to_string(kThreads),
        std::to_string(kNames), files_.back().string(), counters_.string(),
        std::to_string(duration_ms)}));
  }
}

HistoryRun::~HistoryRun() {
  workers_.clear();  // kills any worker still running
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

long long HistoryRun::counted() const {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  for (;;) {
    long long sum = 0;
    bool complete = true;
    for (int n = 0; n < kNames && complete; ++n) {
      const std::optional<long long> value = read_counter(counters_, n);
      complete = value.has_value();
      sum += value.value_or(0);
    }
    if (complete) return sum;
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("a counter file in " + counters_.string() + " stays unreadable");
    }
    std::this_thread::sleep_for(1ms);
  }
}

bool HistoryRun::progressed(long long from, long long by, std::chrono::milliseconds bound) const {
  return fault::eventually([&] { return counted() >= from + by; }, bound);
}

void HistoryRun::stop() {
  for (auto& w : workers_) w->process().signal(SIGUSR1);
}

RunResult HistoryRun::finish() {
  RunResult out;
  const auto bound = std::chrono::milliseconds(duration_ms_) + 60s;
  for (auto& w : workers_) {
    const auto line = w->read_line(bound);
    EXPECT_TRUE(line.has_value()) << "a worker did not finish";
    if (!line) continue;
    std::printf("[%s] worker: %s\n", label_.c_str(), line->c_str());
    out.ops += std::stol(field(*line, "ops"));
    out.errors += std::stol(field(*line, "errors"));
    out.lost += std::stol(field(*line, "lost"));
    out.increments += std::stol(field(*line, "increments"));
    const auto status = w->process().wait_for_exit(30s);
    EXPECT_TRUE(status.has_value()) << "a worker did not exit";
    if (status) {
      EXPECT_EQ(*status, 0) << describe_wait_status(*status);
    }
  }
  out.records = read_history(files_);
  const std::vector<HoldRecord>& records = out.records;
  EXPECT_EQ(records.size(), static_cast<std::size_t>(out.ops)) << "every hold was recorded";
  out.check = fault::check_and_print(label_, records);
  EXPECT_TRUE(out.check.ok()) << out.check.report();
  EXPECT_EQ(out.check.operations_checked, records.size());
  EXPECT_EQ(out.check.names_checked, static_cast<std::size_t>(kNames));
  EXPECT_LE(out.check.excluded_record_count, static_cast<std::size_t>(out.lost))
      << out.check.report();

  // The second witness: holds of a name that overlapped would make the
  // plain read-then-write of its file lose increments.
  EXPECT_EQ(out.increments, out.ops) << "a file increment failed";
  std::map<std::string, long long> holds;
  for (const HoldRecord& r : records) ++holds[r.name];
  long long counted = 0;
  for (int n = 0; n < kNames; ++n) {
    const std::string name = "mx:" + std::to_string(n);
    const long long value = read_counter(counters_, n).value_or(-1);
    EXPECT_EQ(value, holds[name]) << "counter file of " << name << " (-1: not a number)";
    counted += value;
  }
  EXPECT_EQ(counted, out.increments);
  std::printf("[%s] %ld holds (%ld errors, %ld leases lost, %zu excluded), counters %lld\n",
              label_.c_str(), out.ops, out.errors, out.lost, out.check.excluded_record_count,
              counted);
  std::fflush(stdout);
  return out;
}

}  // namespace distlock::test
