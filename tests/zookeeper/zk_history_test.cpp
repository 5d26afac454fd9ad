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
#include "fault/file_history.hpp"
#include "support/history.hpp"
#include "support/process.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace distlock::test {
namespace {

using namespace std::chrono_literals;

// The workers' URI: a 10 s session (longer than a leader election).
std::string uri_of(const ZooKeeperEnsemble& ensemble) {
  return "zookeeper://" + ensemble.connect_string() + "/zk-history?session_timeout_ms=10000";
}

TEST(ZooKeeperMutualExclusion, FourProcessesOnA3NodeEnsembleNeverOverlapAndTokensIncrease) {
  ZooKeeperEnsemble ensemble;
  // Runs until 400 increments are in (however slow the machine), then stops.
  HistoryRun run(uri_of(ensemble), "zk: 4 processes x 4 threads", 0);
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
  HistoryRun run(uri_of(ensemble), "zk: leader kill", 0);
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
