#include "support/cluster_node_info.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace distlock::test {
namespace {

std::pair<int, int> parse_range(const std::string& field) {
  const auto dash = field.find('-');
  if (dash == std::string::npos) return {std::stoi(field), std::stoi(field)};
  return {std::stoi(field.substr(0, dash)), std::stoi(field.substr(dash + 1))};
}

ClusterNodeInfo parse_node_line(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  if (fields.size() < 8) throw std::runtime_error("CLUSTER NODES line: " + line);
  ClusterNodeInfo node;
  node.id = fields[0];
  const auto colon = fields[1].find(':');
  const auto at = fields[1].find('@');
  if (colon == std::string::npos || at == std::string::npos || at < colon) {
    throw std::runtime_error("CLUSTER NODES address: " + line);
  }
  const std::string port = fields[1].substr(colon + 1, at - colon - 1);
  node.port = static_cast<std::uint16_t>(port.empty() ? 0 : std::stoi(port));
  node.flags = fields[2];
  node.master_id = fields[3];
  node.connected = fields[7] == "connected";
  for (std::size_t i = 8; i < fields.size(); ++i) {
    if (fields[i].front() != '[') node.slots.push_back(parse_range(fields[i]));
  }
  return node;
}

}  // namespace

bool ClusterNodeInfo::is_master() const {
  return flags.find("master") != std::string::npos;
}

bool ClusterNodeInfo::failed() const {
  std::istringstream in(flags);
  for (std::string flag; std::getline(in, flag, ',');) {
    if (flag == "fail" || flag == "noaddr") return true;
  }
  return false;
}

bool ClusterNodeInfo::owns(int slot) const {
  return std::any_of(slots.begin(), slots.end(),
                     [slot](const auto& r) { return r.first <= slot && slot <= r.second; });
}

std::vector<ClusterNodeInfo> parse_cluster_nodes(const std::string& text) {
  std::vector<ClusterNodeInfo> result;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) result.push_back(parse_node_line(line));
  }
  return result;
}

}  // namespace distlock::test
