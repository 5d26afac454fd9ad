// CLUSTER NODES output, parsed for the Cluster test fixture.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace distlock::test {

// One line of CLUSTER NODES, as far as the tests need it.
struct ClusterNodeInfo {
  std::string id;
  std::uint16_t port = 0;
  std::string flags;      // "myself,master", "slave", "master,fail", ...
  std::string master_id;  // "-" for a master
  bool connected = false;
  // Owned slot ranges, inclusive; migration markers ("[5->-id]") left out.
  std::vector<std::pair<int, int>> slots;
  bool is_master() const;
  bool failed() const;  // flags hold "fail" (not "fail?")
  bool owns(int slot) const;
};

// Parses CLUSTER NODES output (one node a line). Throws std::runtime_error
// on a line it cannot read.
std::vector<ClusterNodeInfo> parse_cluster_nodes(const std::string& text);

}  // namespace distlock::test
