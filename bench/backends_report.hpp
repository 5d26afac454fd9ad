// The tables backends_bench prints after its run: the raw round trips, the
// uncontended figures and their ratios against the references measured in
// the same run (redis Lock, curator, each server's round trip), the handoffs
// and the deaths.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lock_loops.hpp"
#include "round_trip.hpp"

namespace distlock::bench {

// One run's figures; the vectors per contender are in `names` order.
struct BackendsReport {
  std::vector<std::string> names;
  std::vector<std::string> leases;            // what a killed holder leaves
  std::vector<double> raw_round_trips_per_s;  // the contender's server's; -1: none
  std::vector<std::pair<std::string, RoundTrips>> raws;
  std::vector<int> threads;
  std::vector<int> handoff_threads;
  std::map<int, std::vector<Throughput>> tp;  // by thread count
  std::map<int, std::vector<Handoff>> ho;     // by thread count
  bool death = true;
  std::vector<Death> deaths;
  std::size_t mariadb_connections = 0;
  std::size_t postgres_connections = 0;
};

// Prints the tables on stdout, in Markdown.
void print_report(const BackendsReport& rep);

// v with thousands separators and `decimals` decimals; "failed" for v < 0.
std::string figure(double v, int decimals = 0);

}  // namespace distlock::bench
