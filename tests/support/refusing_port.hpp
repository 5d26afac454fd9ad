// A loopback TCP port that refuses connections, for tests of connect errors.
#pragma once

#include <cstdint>

namespace distlock::test {

// A loopback port that refuses connections: bound, never listening, and held
// until destroyed so no other test (a server started by another test process
// under ctest -j, say) can take it meanwhile. A connect to it fails at once
// with ECONNREFUSED. Throws std::system_error if no port can be bound.
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

}  // namespace distlock::test
