// WAIT behind a write (ClientOptions::min_replicas_acked): how many replicas
// acknowledged everything the connection sent before it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>
#include <system_error>

namespace distlock::topology {

class Topology;

struct ReplicaAck {
  int replicas = 0;  // 0: no WAIT
  std::chrono::milliseconds timeout{0};
  bool wanted() const noexcept { return replicas > 0; }
};

// Sends WAIT replicas timeout to the connection that serves `route_key`,
// queued right behind what was submitted there before (one pipeline). `done`
// runs once on the I/O thread with the error (timeout, connection_lost,
// server_error for an error reply such as on a replica) or the number of
// replicas that acknowledged. An error return means it was not queued and
// `done` will not run.
std::error_code send_replica_wait(Topology& topology,
                                  std::string_view route_key,
                                  const ReplicaAck& ack,
                                  std::function<void(std::error_code, std::int64_t)> done);

// "only 0 of 1 replicas acknowledged the acquire of 'x' within 100 ms".
std::string replica_shortfall(const ReplicaAck& ack,
                              std::error_code ec,
                              std::int64_t acked,
                              std::string_view what);

}  // namespace distlock::topology
