#include "curator_contender.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "support/curator_peer.hpp"
#include "support/poll_until.hpp"

namespace distlock::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// "RESULT a=1 b=2" -> {a: "1", b: "2"}.
std::map<std::string, std::string> result_fields(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream in(line);
  for (std::string f; in >> f;) {
    if (const auto eq = f.find('='); eq != std::string::npos) {
      fields[f.substr(0, eq)] = f.substr(eq + 1);
    }
  }
  return fields;
}

distlock::test::CuratorPeerOptions peer_options(const LoopSettings& s) {
  distlock::test::CuratorPeerOptions o;
  o.session_timeout = std::chrono::milliseconds(s.session_ms);
  o.warmup = std::chrono::milliseconds(static_cast<long>(s.warmup * 1000));
  return o;
}

std::chrono::milliseconds run_bound(const LoopSettings& s) {
  return std::chrono::milliseconds(static_cast<long>((s.warmup + s.seconds) * 1000)) + 60s;
}

}  // namespace

Throughput curator_uncontended(const std::string& connect,
                               int threads,
                               const LoopSettings& s,
                               const std::string& path) {
  try {
    distlock::test::CuratorPeer peer(
        connect, {"bench", path, std::to_string(threads), std::to_string(s.seconds), "uncontended"},
        peer_options(s));
    peer.expect_line("CONNECTED");
    Throughput r;
    if (s.warmup > 0) {
      r.warmup_pairs =
          std::stol(result_fields(peer.expect_line("WARMUP ", run_bound(s))).at("pairs"));
    }
    const auto f = result_fields(peer.expect_line("RESULT ", run_bound(s)));
    peer.wait_exit();
    r.pairs_per_s = std::stod(f.at("pairs_per_s"));
    r.p50_us = std::stod(f.at("acquire_p50_us"));
    r.p99_us = std::stod(f.at("acquire_p99_us"));
    r.pairs = std::stol(f.at("pairs"));
    return r;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backends_bench: curator: %s\n", e.what());
    return {};
  }
}

Handoff curator_handoff(const std::string& connect,
                        int threads,
                        const LoopSettings& s,
                        const std::string& path) {
  try {
    distlock::test::CuratorPeer peer(
        connect, {"handoff", path, std::to_string(threads), std::to_string(s.seconds)},
        peer_options(s));
    peer.expect_line("CONNECTED");
    const auto f = result_fields(peer.expect_line("RESULT ", run_bound(s)));
    peer.wait_exit();
    Handoff r;
    r.p50_us = std::stod(f.at("handoff_p50_us"));
    r.p99_us = std::stod(f.at("handoff_p99_us"));
    r.pairs = std::stol(f.at("pairs"));
    r.pairs_per_s = std::stod(f.at("pairs_per_s"));
    r.handoffs = std::stol(f.at("handoffs"));
    return r;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backends_bench: curator: %s\n", e.what());
    return {};
  }
}

namespace {

// What every server of the ensemble has received from clients
// (zk_packets_received of mntr, summed): requests and pings.
long long zk_packets(const distlock::test::ZooKeeperEnsemble& zk) {
  long long total = 0;
  for (int i = 0; i < zk.node_count(); ++i) {
    const std::string mntr = zk.four_letter(i, "mntr");
    const std::string key = "zk_packets_received";
    const auto at = mntr.find(key);
    if (at != std::string::npos) total += std::stoll(mntr.substr(at + key.size()));
  }
  return total;
}

}  // namespace

Throughput counted(const distlock::test::ZooKeeperEnsemble& zk,
                   const std::function<Throughput()>& run) {
  const long long before = zk_packets(zk);
  Throughput r = run();
  const long long after = zk_packets(zk);
  if (r.pairs_per_s >= 0 && r.pairs + r.warmup_pairs > 0) {
    r.requests_per_pair =
        static_cast<double>(after - before) / static_cast<double>(r.pairs + r.warmup_pairs);
  }
  return r;
}

Death curator_death(const std::string& connect,
                    distlock::test::ZkInspector& zk,
                    const std::string& path,
                    const LoopSettings& s) {
  Death d;
  try {
    distlock::test::CuratorPeerOptions o = peer_options(s);
    o.warmup = 0ms;
    distlock::test::CuratorPeer holder(connect, {"hold", path}, o);
    holder.expect_line("ACQUIRED ");
    const auto held_since = Clock::now();
    distlock::test::CuratorPeer waiter(connect, {"wait", path}, o);
    waiter.expect_line("WAITING");
    if (!distlock::test::poll_until([&] { return zk.queue(path).size() == 2; },
                                    Clock::now() + 30s)) {
      d.error = "the waiter was not seen in line before the kill";
    }
    const auto killed_at = Clock::now();
    holder.kill();
    d.held_ms = std::chrono::duration<double, std::milli>(killed_at - held_since).count();
    waiter.expect_line("ACQUIRED ", std::chrono::milliseconds(s.session_ms) * 3 + 30s);
    d.ms = std::chrono::duration<double, std::milli>(Clock::now() - killed_at).count();
  } catch (const std::exception& e) {
    d.error = e.what();
  }
  return d;
}

// --- Output ------------------------------------------------------------------

}  // namespace distlock::bench
