// A cross-process run of the mutual-exclusion checker on the backends whose
// Clients have no Redis commands (ZooKeeper, MySQL, PostgreSQL): fault_worker
// processes (mode history-zk, which takes any URI) take the fenced locks
// "mx:0".."mx:2" at random, half their threads thread-owned and half as
// Leases; inside, each increments the lock's counter file with a plain
// read, then write, and records the hold. finish() proves that no two
// holders of a name were inside together while both believed their lease
// valid, that the fencing tokens strictly increased per name in hold order,
// and, by the counter files, that no increment was lost.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fault/fault_support.hpp"
#include "support/history.hpp"

namespace distlock::test {

struct RunResult {
  long ops = 0;         // holds recorded
  long errors = 0;      // acquires that failed, increments that failed
  long lost = 0;        // holds whose lease was not valid as they left
  long increments = 0;  // file increments done inside a hold
  std::vector<HoldRecord> records;
  CheckResult check;
};

// 4 history-zk workers of 4 threads on 3 names, against `uri`, for
// duration_ms (0: until stop()).
class HistoryRun {
 public:
  HistoryRun(const std::string& uri, std::string label, long duration_ms);
  ~HistoryRun();
  HistoryRun(const HistoryRun&) = delete;
  HistoryRun& operator=(const HistoryRun&) = delete;

  // The increments made so far: the sum of the counter files, read again
  // while one is being rewritten (at most 5 s).
  long long counted() const;
  // Polls the counter files (no event tells this process of a worker's
  // progress) until `by` more increments than `from` were made, at most
  // `bound`.
  bool progressed(long long from, long long by, std::chrono::milliseconds bound) const;
  // Asks every worker to finish (SIGUSR1): each ends its current hold and
  // reports.
  void stop();
  // Reads every worker's report and checks, as gtest expectations: every
  // worker reported and exited 0; every hold it counted was recorded; the
  // checker found no overlap while both leases were believed valid, no
  // fencing token that did not increase and no invalid record; every hold
  // left out of the overlap check (its lease ended before its holder
  // entered) was counted lost by its worker; every file increment
  // succeeded, each counter file equals the holds of its name and so their
  // sum equals the increments reported.
  RunResult finish();

 private:
  const std::string label_;
  const long duration_ms_;
  const std::filesystem::path dir_;
  const std::filesystem::path counters_;
  std::vector<std::filesystem::path> files_;
  std::vector<std::unique_ptr<fault::Worker>> workers_;
};

}  // namespace distlock::test
