// The mutual-exclusion checker over a recorded history, across processes:
// 4 processes of 8 threads take 4 fenced locks for about 10 s, and 2 processes
// of 8 threads take 2 fenced fair locks for about 5 s, recording every hold.
#include <gtest/gtest.h>

#include "fault/history_run.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

TEST(MutualExclusion, FourProcessesOfEightThreadsForTenSecondsNeverOverlapAndTokensIncrease) {
  RedisServer server;
  // Half the threads hold thread-owned, half as Leases.
  HistoryRunSpec spec;
  spec.label = "4 processes x 8 threads";
  spec.processes = 4;
  spec.threads = 8;
  spec.names = 4;
  spec.duration_ms = 10000;
  const auto run = run_history(server, spec);
  EXPECT_EQ(run.check.names_checked, 4u);
  EXPECT_GT(run.ops, 1000) << "too few holds to prove anything";
}

TEST(MutualExclusion, TwoProcessesOfEightThreadsOnFairLocksForFiveSecondsNeverOverlap) {
  RedisServer server;
  HistoryRunSpec spec;
  spec.label = "fair: 2 processes x 8 threads";
  spec.mode = "history-fair";
  spec.processes = 2;
  spec.threads = 8;
  spec.names = 2;
  spec.duration_ms = 5000;
  const auto run = run_history(server, spec);
  EXPECT_GT(run.ops, 100) << "too few holds to prove anything";
}

}  // namespace
}  // namespace distlock::fault
