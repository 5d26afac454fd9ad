// The mutual-exclusion checker over ZooKeeper (issue 28), across processes:
// fault_worker processes (mode history-zk) take the fenced ZooKeeper locks
// "mx:0".."mx:2" of a 3-node ensemble at random, half their threads
// thread-owned and half as Leases; inside, each increments the lock's counter
// file with a plain read, then write, and records the hold. The checker then
// proves that no two holders of a name were inside together while both
// believed their lease valid and that the fencing tokens (czxids) strictly
// increased per name in hold order; the counter files, a second witness,
// prove that no increment was lost.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fault/fault_support.hpp"
#include "support/history.hpp"
#include "support/process.hpp"
#include "support/zookeeper_ensemble.hpp"

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

// The workers' reports, summed, and the checker's findings.
struct RunResult {
  long ops = 0;         // holds recorded
  long errors = 0;      // acquires that failed, increments that failed
  long lost = 0;        // holds whose lease was not valid as they left
  long increments = 0;  // file increments done inside a hold
  std::vector<HoldRecord> records;
  CheckResult check;
};

// kProcesses history-zk workers of kThreads threads on kNames names, against
// `ensemble` with a 10 s session (longer than a leader election), for
// duration_ms (0: until stop()).
class HistoryRun {
 public:
  HistoryRun(const ZooKeeperEnsemble& ensemble, std::string label, long duration_ms)
      : label_(std::move(label)),
        duration_ms_(duration_ms),
        dir_(make_temp_dir("distlock-zk-history-")),
        counters_(dir_ / "counters") {
    std::filesystem::create_directory(counters_);
    const std::string uri =
        "zookeeper://" + ensemble.connect_string() + "/zk-history?session_timeout_ms=10000";
    for (int p = 0; p < kProcesses; ++p) {
      files_.push_back(dir_ / ("worker-" + std::to_string(p) + ".history"));
      workers_.push_back(std::make_unique<Worker>(std::vector<std::string>{
          DISTLOCK_FAULT_WORKER, "history-zk", uri, std::to_string(p + 1), std::to_string(kThreads),
          std::to_string(kNames), files_.back().string(), counters_.string(),
          std::to_string(duration_ms)}));
    }
  }
  ~HistoryRun() {
    workers_.clear();  // kills any worker still running
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  HistoryRun(const HistoryRun&) = delete;
  HistoryRun& operator=(const HistoryRun&) = delete;

  // The increments made so far: the sum of the counter files, read again
  // while one is being rewritten (at most 5 s).
  long long counted() const {
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

  // Polls the counter files (no event tells this process of a worker's
  // progress) until `by` more increments than `from` were made, at most
  // `bound`.
  bool progressed(long long from, long long by, std::chrono::milliseconds bound) const {
    return fault::eventually([&] { return counted() >= from + by; }, bound);
  }

  // Asks every worker to finish (SIGUSR1): each ends its current hold and
  // reports.
  void stop() {
    for (auto& w : workers_) w->process().signal(SIGUSR1);
  }

  // Reads every worker's report and checks, as gtest expectations: every
  // worker reported and exited 0; every hold it counted was recorded; the
  // checker found no overlap while both leases were believed valid, no
  // fencing token that did not increase and no invalid record; every hold
  // left out of the overlap check (its lease ended before its holder
  // entered) was counted lost by its worker, as the Redis fault tests
  // require; every file increment succeeded, each counter file equals the
  // holds of its name and so their sum equals the increments reported.
  RunResult finish() {
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

 private:
  const std::string label_;
  const long duration_ms_;
  const std::filesystem::path dir_;
  const std::filesystem::path counters_;
  std::vector<std::filesystem::path> files_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

TEST(ZooKeeperMutualExclusion, FourProcessesOnA3NodeEnsembleNeverOverlapAndTokensIncrease) {
  ZooKeeperEnsemble ensemble;
  // Runs until 400 increments are in (however slow the machine), then stops.
  HistoryRun run(ensemble, "zk: 4 processes x 4 threads", 0);
  ASSERT_TRUE(run.progressed(0, 400, 120s)) << "the workers made no progress";
  run.stop();
  const RunResult result = run.finish();
  // Nothing failed: no error and no lease lost without a fault.
  EXPECT_EQ(result.errors, 0);
  EXPECT_EQ(result.lost, 0);
}

TEST(ZooKeeperMutualExclusion,
     FourProcessesOnA3NodeEnsembleNeverOverlapAndTokensIncreaseAcrossALeaderKill) {
  ZooKeeperEnsemble ensemble;
  HistoryRun run(ensemble, "zk: leader kill", 0);
  ASSERT_TRUE(run.progressed(0, 100, 30s)) << "the workers made no progress";
  const int leader = ensemble.leader();
  const std::int64_t killed_at = steady_now_ns();
  ensemble.kill(leader);
  // The two nodes left elect a leader (the sessions outlive the election)
  // and serve the workers again.
  EXPECT_NE(ensemble.leader(), leader);
  ASSERT_TRUE(run.progressed(run.counted(), 100, 30s)) << "no progress after the leader kill";
  ensemble.restart(leader);
  ASSERT_TRUE(run.progressed(run.counted(), 100, 30s)) << "no progress after the restart";
  run.stop();
  const RunResult result = run.finish();
  EXPECT_GT(result.ops, 300) << "too few holds to prove anything";
  // How long the kill stopped the workers: the longest time from it on in
  // which no hold entered.
  std::vector<std::int64_t> enters{killed_at};
  for (const HoldRecord& r : result.records) {
    if (r.enter_ns > killed_at) enters.push_back(r.enter_ns);
  }
  std::sort(enters.begin(), enters.end());
  std::int64_t stalled = 0;
  for (std::size_t i = 1; i < enters.size(); ++i) {
    stalled = std::max(stalled, enters[i] - enters[i - 1]);
  }
  std::printf("[zk: leader kill] node %d killed; then no hold entered for %lld ms\n", leader,
              static_cast<long long>(stalled / 1'000'000));
}

}  // namespace
}  // namespace distlock::test
