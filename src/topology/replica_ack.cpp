#include "topology/replica_ack.hpp"

#include <array>
#include <string>

#include "distlock/error.hpp"
#include "distlock/value.hpp"
#include "net/detached_call.hpp"
#include "topology/topology.hpp"

namespace distlock::topology {

std::error_code send_replica_wait(Topology& topology,
                                  std::string_view route_key,
                                  const ReplicaAck& ack,
                                  std::function<void(std::error_code, std::int64_t)> done) {
  const std::string replicas = std::to_string(ack.replicas);
  const std::string timeout = std::to_string(ack.timeout.count());
  const std::array<std::string_view, 3> args{"WAIT", replicas, timeout};
  auto call = std::make_unique<net::DetachedCall>(
      [done = std::move(done)](std::error_code ec, Value reply) {
        std::int64_t acked = -1;
        if (!ec && reply.is_integer()) acked = reply.as_integer();
        if (!ec && !reply.is_integer()) {
          ec = reply.is_error() ? errc::server_error : errc::protocol_error;
        }
        done(ec, acked);
      });
  return net::DetachedCall::start(
      std::move(call), [&](net::DetachedCall& c) { return topology.command(route_key, args, &c); });
}

std::string replica_shortfall(const ReplicaAck& ack,
                              std::error_code ec,
                              std::int64_t acked,
                              std::string_view what) {
  std::string text = "only " + std::to_string(acked < 0 ? 0 : acked) + " of " +
                     std::to_string(ack.replicas) + " replicas acknowledged " + std::string(what) +
                     " within " + std::to_string(ack.timeout.count()) + " ms";
  if (ec) text += " (WAIT: " + ec.message() + ")";
  return text;
}

}  // namespace distlock::topology
