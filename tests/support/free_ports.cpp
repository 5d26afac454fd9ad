#include "support/free_ports.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <system_error>
#include <utility>

namespace distlock::test {
namespace {

class Socket {
 public:
  Socket() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket& operator=(Socket&&) = delete;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Ports some developer's own server may be listening on (or start on later).
constexpr std::array<std::uint16_t, 5> kNeverUsed{6379, 2181, 2888, 3888, 8080};

}  // namespace

std::vector<std::uint16_t> pick_free_ports(std::size_t count) {
  std::vector<Socket> held;
  std::vector<std::uint16_t> ports;
  while (ports.size() < count) {
    Socket s;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = 0;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (s.get() < 0 || ::bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::system_error(errno, std::generic_category(), "pick a free port");
    }
    const std::uint16_t port = ntohs(addr.sin_port);
    held.push_back(std::move(s));
    if (std::find(kNeverUsed.begin(), kNeverUsed.end(), port) == kNeverUsed.end()) {
      ports.push_back(port);
    }
  }
  return ports;
}

}  // namespace distlock::test
