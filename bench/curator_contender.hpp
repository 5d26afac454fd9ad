// Apache Curator's InterProcessMutex as a backends_bench contender: the
// Curator peer (tests/interop/curator/CuratorPeer.java, one JVM, one
// CuratorFramework shared by its threads) runs the loops of lock_loops.hpp
// in the JVM and prints their figures; and the ZooKeeper request count that
// both ZooKeeper contenders are measured by.
#pragma once
#include <functional>
#include <string>

#include "lock_loops.hpp"
#include "support/zk_inspect.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace distlock::bench {

// The peer's bench mode: `threads` threads, each its own name under `path`.
Throughput curator_uncontended(const std::string& connect,
                               int threads,
                               const LoopSettings& s,
                               const std::string& path);

// The peer's handoff mode: `threads` threads on `path`.
Handoff curator_handoff(const std::string& connect,
                        int threads,
                        const LoopSettings& s,
                        const std::string& path);

// A peer holding `path` SIGKILLed while a second peer waits in line on it.
Death curator_death(const std::string& connect,
                    distlock::test::ZkInspector& zk,
                    const std::string& path,
                    const LoopSettings& s);

// `run` with the ensemble's received packets (zk_packets_received of every
// node's mntr) counted around it, per pair made (warm-up included). The
// count also holds connects, pings and the other idle sessions' pings.
Throughput counted(const distlock::test::ZooKeeperEnsemble& zk,
                   const std::function<Throughput()>& run);

}  // namespace distlock::bench
