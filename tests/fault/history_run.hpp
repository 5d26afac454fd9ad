// A no-fault run of the mutual-exclusion checker across processes, shared by
// the exclusion tests of every primitive: fault workers record every hold
// of fenced names "mx:0".."mx:<names-1>", then the checker proves that no two
// holders overlapped while both believed their lease valid and that tokens
// increased, and the workers' non-atomic counters prove no increment was lost.
#pragma once

#include <string>
#include <vector>

#include "support/history.hpp"
#include "support/redis_server.hpp"

namespace distlock::fault {

struct HistoryRunSpec {
  std::string label;               // printed with every figure
  std::string mode = "history";    // the fault worker's mode ("history-fair", ...)
  std::vector<std::string> extra;  // trailing worker arguments ("rw", "simple")
  int processes = 2;
  int threads = 8;
  int names = 2;
  long duration_ms = 5000;
};

struct HistoryRunResult {
  long ops = 0;         // holds recorded
  long increments = 0;  // GET+SET pairs the workers completed under the lock
  long reads = 0;       // read holds (read-write workers only)
  test::CheckResult check;
};

// Runs the workers against `server` (10 s watchdog lease, 5 s command
// timeout) and checks, as gtest expectations: every worker finished, exited
// 0 and reported no error, no lost lease and no reader overlapping a writer;
// every recorded hold was read and the checker found nothing; the counters
// in the server equal the increments. The caller asserts on the totals.
HistoryRunResult run_history(const test::RedisServer& server, const HistoryRunSpec& spec);

}  // namespace distlock::fault
