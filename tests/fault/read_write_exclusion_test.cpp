// The mutual-exclusion checker over the read-write lock's write side, with
// readers checking that no writer is inside while they read: 2 processes of
// 8 threads (2 readers, 6 writers each) on 2 fenced read-write locks for 5 s.
#include <gtest/gtest.h>

#include "fault/history_run.hpp"

namespace distlock::fault {
namespace {

using test::RedisServer;

TEST(ReadWriteExclusion, TwoProcessesOfEightThreadsNeverOverlapWritersNorLetAReaderInWithAWriter) {
  RedisServer server;
  HistoryRunSpec spec;
  spec.label = "read-write, 2 processes x 8 threads";
  spec.extra = {"rw"};
  spec.processes = 2;
  spec.threads = 8;
  spec.names = 2;
  spec.duration_ms = 5000;
  const auto run = run_history(server, spec);
  EXPECT_EQ(run.check.names_checked, 2u);
  EXPECT_GT(run.ops, 200) << "too few write holds to prove anything";
  EXPECT_GT(run.reads, 50) << "too few reads to prove anything";
}

}  // namespace
}  // namespace distlock::fault
