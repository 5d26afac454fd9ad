// The mutual-exclusion checker over the SET NX lock (SimpleLock): 3 processes
// of 6 threads take 3 fenced simple locks for about 5 s, recording every hold.
#include <gtest/gtest.h>

#include "fault/history_run.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

TEST(SimpleLockExclusion, ThreeProcessesOfSixThreadsNeverOverlapAndTokensIncrease) {
  RedisServer server;
  HistoryRunSpec spec;
  spec.label = "simple lock, 3 processes x 6 threads";
  spec.extra = {"simple"};
  spec.processes = 3;
  spec.threads = 6;
  spec.names = 3;
  spec.duration_ms = 5000;
  const auto run = run_history(server, spec);
  EXPECT_EQ(run.check.names_checked, 3u);
  EXPECT_GT(run.ops, 500) << "too few holds to prove anything";
}

}  // namespace
}  // namespace distlock::fault
