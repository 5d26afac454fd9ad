// A bare RESP subscriber on its own socket: how a Redisson waiter listens,
// for the interop tests (no library code in between).
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace distlock::test {

class RawSubscriber {
 public:
  // Connects to 127.0.0.1:`port` and sends `verb` (SUBSCRIBE, or SSUBSCRIBE
  // on a Cluster master that owns the channel's slot) for `channel`. Throws
  // std::runtime_error when it cannot connect or send.
  RawSubscriber(std::uint16_t port,
                const std::string& channel,
                const std::string& verb = "SUBSCRIBE") {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      throw std::runtime_error("cannot connect the raw subscriber");
    }
    const std::string cmd = "*2\r\n$" + std::to_string(verb.size()) + "\r\n" + verb + "\r\n$" +
                            std::to_string(channel.size()) + "\r\n" + channel + "\r\n";
    if (::write(fd_, cmd.data(), cmd.size()) != static_cast<ssize_t>(cmd.size())) {
      ::close(fd_);
      throw std::runtime_error("cannot send " + verb);
    }
  }
  ~RawSubscriber() { ::close(fd_); }
  RawSubscriber(const RawSubscriber&) = delete;
  RawSubscriber& operator=(const RawSubscriber&) = delete;

  // Reads until `text` has arrived (true) or `bound` passes (false).
  bool wait_for(const std::string& text, std::chrono::milliseconds bound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (received_.find(text) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[1024];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n <= 0) return false;
      received_.append(chunk, static_cast<std::size_t>(n));
    }
    return true;
  }

 private:
  int fd_ = -1;
  std::string received_;
};

}  // namespace distlock::test
