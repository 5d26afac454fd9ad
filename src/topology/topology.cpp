#include "topology/topology.hpp"

#include <string>

#include "net/connection.hpp"
#include "resp/encoder.hpp"

namespace distlock::topology {

std::error_code Topology::command(std::string_view route_key,
                                  std::span<const std::string_view> args,
                                  net::Completion* completion) {
  std::string payload;
  resp::encode_command(payload, args);
  return data_for(route_key).submit(std::move(payload), 1, completion);
}

void Topology::connect_in_background() {
  data_for({}).start();
}

std::size_t Topology::outstanding() {
  return data_for({}).outstanding();
}

bool Topology::connected(std::string_view key) {
  return data_for(key).connected();
}

}  // namespace distlock::topology
