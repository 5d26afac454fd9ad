// The mutual-exclusion checker on MySQL/MariaDB and PostgreSQL (issue 29),
// across processes: 4 fault_worker processes (mode history-zk, which takes
// any URI) of 4 threads each take the fenced locks "mx:0".."mx:2" at random,
// half thread-owned and half as Leases, and increment a counter file inside
// (fault/file_history.hpp). The checker proves that no two holders of a
// name were inside together while both believed their lease valid and that
// the counter-row fencing tokens strictly increased per name in hold order;
// the counter files prove that no increment was lost.
#include <gtest/gtest.h>

#include <chrono>

#include "fault/file_history.hpp"
#include "support/mariadb_server.hpp"
#include "support/postgres_server.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;

// Runs until 300 increments are in (however slow the machine), then stops;
// nothing may fail and no lease may be lost without a fault.
void four_processes_never_overlap(const std::string& uri, const std::string& label) {
  HistoryRun run(uri, label, 0);
  ASSERT_TRUE(run.progressed(0, 300, 120s)) << "the workers made no progress";
  run.stop();
  const RunResult result = run.finish();
  EXPECT_EQ(result.errors, 0);
  EXPECT_EQ(result.lost, 0);
}

TEST(SqlMutualExclusion, FourProcessesOnPostgresNeverOverlapAndTokensIncrease) {
  PostgresServer server;
  four_processes_never_overlap(server.uri(), "postgresql: 4 processes x 4 threads");
}

TEST(SqlMutualExclusion, FourProcessesOnMariaDbNeverOverlapAndTokensIncrease) {
  MariaDbServer server;
  four_processes_never_overlap(server.uri(), "mariadb: 4 processes x 4 threads");
}

}  // namespace
}  // namespace distlock::test
