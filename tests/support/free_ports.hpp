// Free loopback ports for the test fixtures' servers (redis-server,
// ZooKeeper), so parallel ctest runs never share a port.
#pragma once

#include <cstdint>
#include <vector>

namespace distlock::test {

// Binds 127.0.0.1:0 to let the kernel choose `count` distinct free ports (all
// sockets are held until every port is chosen, so they differ) and returns
// them once every socket is closed again. Never returns a port a developer's
// own server may use: 6379 (Redis), 2181, 2888, 3888 (ZooKeeper's client,
// quorum and election ports) or 8080 (ZooKeeper's admin server). Another
// process can take a port before the fixture's server binds it: a fixture
// must detect that (the server exits with "Address already in use") and
// retry with new ports. Throws std::system_error if a socket cannot be
// created or bound. Thread-safe.
std::vector<std::uint16_t> pick_free_ports(std::size_t count);

}  // namespace distlock::test
