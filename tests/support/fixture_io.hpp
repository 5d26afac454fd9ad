// Small I/O pieces the server fixtures (redis_server, zookeeper_ensemble,
// the SQL servers) share: an owned socket, a bounded poll, reading the tail
// of a log, and percent-encoding a password for a URI.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace distlock::test {

// A file descriptor closed on destruction (-1: none).
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Polls `fd` for `events` until one is ready (true) or `deadline` passes or
// poll fails (false); EINTR is retried.
bool poll_for(int fd, short events, std::chrono::steady_clock::time_point deadline);

// The bytes of the file at `path` from `offset` on ("" if it cannot be read).
std::string read_from(const std::string& path, std::uintmax_t offset);

// The file's size, 0 if it does not exist.
std::uintmax_t size_or_zero(const std::string& path);

// The last `lines` lines of `text`.
std::string tail(const std::string& text, std::size_t lines);

// `value` with every byte but RFC 3986's unreserved ones (letters, digits,
// "-._~") as %XX, for a password in a URI's userinfo.
std::string percent_encoded(const std::string& value);

}  // namespace distlock::test
