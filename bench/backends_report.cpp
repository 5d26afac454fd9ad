#include "backends_report.hpp"

#include <cstdio>

namespace distlock::bench {
namespace {

// a / b as "0.12x", "-" when either is missing.
std::string ratio(double a, double b) {
  if (a <= 0 || b <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", a / b);
  return buf;
}

int index_of(const BackendsReport& rep, const std::string& name) {
  for (std::size_t i = 0; i < rep.names.size(); ++i) {
    if (rep.names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::string figure(double v, int decimals) {
  if (v < 0) return "failed";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;  // thousands separators for the integer part
  const auto dot = s.find('.');
  for (auto i = (dot == std::string::npos ? s.size() : dot); i > 3; i -= 3) s.insert(i - 3, ",");
  return s;
}

void print_report(const BackendsReport& rep) {
  const int redis_ref = index_of(rep, "redis Lock");
  const int zk_at = index_of(rep, "distlock zookeeper");
  const int curator_ref = index_of(rep, "curator");
  std::printf("\n## Raw round trips: one connection, the server's C driver, one thread\n\n");
  for (const auto& [what, r] : rep.raws) {
    std::printf("- %s: %s/s (p50 %s us)\n", what.c_str(), figure(r.per_s).c_str(),
                figure(r.p50_us).c_str());
  }
  std::printf(
      "\n## Uncontended: lock+unlock pairs/s (acquire p50 / p99 us), each thread its own "
      "name\n\n| threads |");
  for (const std::string& name : rep.names) std::printf(" %s |", name.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < rep.names.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const int threads : rep.threads) {
    std::printf("| %d |", threads);
    for (const Throughput& r : rep.tp.at(threads)) {
      std::printf(" %s (%s / %s) |", figure(r.pairs_per_s).c_str(), figure(r.p50_us).c_str(),
                  figure(r.p99_us).c_str());
    }
    std::printf("\n");
  }
  std::printf("\nRatios, this run: pairs/s against redis Lock's at the same threads");
  std::printf("\n\n| threads |");
  for (const std::string& name : rep.names) std::printf(" %s |", name.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < rep.names.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (const int threads : rep.threads) {
    std::printf("| %d |", threads);
    for (const Throughput& r : rep.tp.at(threads)) {
      const double ref = redis_ref >= 0 ? rep.tp.at(threads)[redis_ref].pairs_per_s : -1;
      std::printf(" %s |", ratio(r.pairs_per_s, ref).c_str());
    }
    std::printf("\n");
  }
  if (!rep.threads.empty()) {
    const int t = rep.threads.front();
    std::printf(
        "\nAt %d thread(s), pairs/s against the server's raw round trips/s (one connection; "
        "a pair is at least 2 round trips, so at most 0.50x):\n",
        t);
    for (std::size_t i = 0; i < rep.names.size(); ++i) {
      if (rep.raw_round_trips_per_s[i] < 0) continue;
      std::printf("  %s: %s\n", rep.names[i].c_str(),
                  ratio(rep.tp.at(t)[i].pairs_per_s, rep.raw_round_trips_per_s[i]).c_str());
    }
  }
  if (zk_at >= 0 && curator_ref >= 0) {
    std::printf("\ndistlock zookeeper against curator (the ZooKeeper reference), pairs/s:");
    for (const int threads : rep.threads) {
      std::printf(
          " %d thread(s) %s;", threads,
          ratio(rep.tp.at(threads)[zk_at].pairs_per_s, rep.tp.at(threads)[curator_ref].pairs_per_s)
              .c_str());
    }
    std::printf(
        "\nrequests the ensemble received per pair (every node, warm-up and connect "
        "included):");
    for (const int threads : rep.threads) {
      std::printf(" %d thread(s) zookeeper %.2f, curator %.2f;", threads,
                  rep.tp.at(threads)[zk_at].requests_per_pair,
                  rep.tp.at(threads)[curator_ref].requests_per_pair);
    }
    std::printf("\n");
  }
  std::printf(
      "\nmariadb GET_LOCK: a Client of max_connections %zu; postgres advisory: %zu (the "
      "fixture's server allows 60), so above %zu threads some wait for a connection\n",
      rep.mariadb_connections, rep.postgres_connections, rep.postgres_connections);
  for (const int threads : rep.handoff_threads) {
    std::printf(
        "\n## Contended: %d threads on one name (handoff: release -> another thread's "
        "acquire)\n\n| contender | handoff p50 us | handoff p99 us | p50 / redis Lock's | "
        "acquisitions/s | handoffs / acquisitions |\n|---|---|---|---|---|---|\n",
        threads);
    for (std::size_t i = 0; i < rep.names.size(); ++i) {
      const Handoff& r = rep.ho.at(threads)[i];
      const double ref = redis_ref >= 0 ? rep.ho.at(threads)[redis_ref].p50_us : -1;
      std::printf("| %s | %s | %s | %s | %s | %ld / %ld |\n", rep.names[i].c_str(),
                  figure(r.p50_us).c_str(), figure(r.p99_us).c_str(),
                  ratio(r.handoffs > 0 ? r.p50_us : -1, ref).c_str(), figure(r.pairs_per_s).c_str(),
                  r.handoffs, r.pairs);
    }
  }
  if (rep.death) {
    std::printf(
        "\n## Death to next holder (one sample each): holder process SIGKILLed, a waiter "
        "already in line\n\n| contender | lease | kill -> next holder ms | held before "
        "the kill ms |\n|---|---|---|---|\n");
    for (std::size_t i = 0; i < rep.deaths.size(); ++i) {
      const Death& d = rep.deaths[i];
      std::printf("| %s | %s | %s%s%s | %s |\n", rep.names[i].c_str(), rep.leases[i].c_str(),
                  figure(d.ms, d.ms >= 0 && d.ms < 100 ? 1 : 0).c_str(),
                  d.error.empty() ? "" : "; ", d.error.c_str(), figure(d.held_ms).c_str());
    }
  }
}

}  // namespace distlock::bench
