#include "support/tcp_proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <list>
#include <system_error>
#include <vector>

namespace distlock::test {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void set_nonblocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// Bytes read from one side, waiting to be written to the other.
struct Chunk {
  Clock::time_point read_at;
  std::string bytes;
  std::size_t offset = 0;
};

struct Direction {
  int from = -1;
  int to = -1;
  std::deque<Chunk> queue;
};

struct Pair {
  Direction up;    // client -> upstream
  Direction down;  // upstream -> client
  bool dead = false;
};

}  // namespace

// The forwarding thread's state: only that thread touches it.
struct TcpProxy::Loop {
  TcpProxy& proxy;
  std::list<Pair> pairs;
  unsigned drops_seen = 0;

  bool due(const Chunk& c, Clock::time_point now, bool upward) const {
    if (proxy.held_.load()) return false;
    if (!upward && proxy.replies_held_.load()) return false;
    return now >= c.read_at + std::chrono::milliseconds(proxy.delay_ms_.load());
  }

  void accept_one() {
    const int client = ::accept(proxy.listen_fd_, nullptr, nullptr);
    if (client < 0) return;
    const int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in a = loopback(proxy.upstream_);
    // Blocking connect on loopback: answered at once by the kernel (even
    // for a paused server, whose backlog accepts it).
    if (upstream < 0 || ::connect(upstream, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
      if (upstream >= 0) ::close(upstream);
      ::close(client);
      return;
    }
    set_nonblocking(client);
    set_nonblocking(upstream);
    Pair p;
    p.up = {client, upstream, {}};
    p.down = {upstream, client, {}};
    pairs.push_back(std::move(p));
    ++proxy.connections_;
  }

  // Reads what `d.from` has; false when it closed or failed.
  bool read_side(Direction& d) {
    char buf[16384];
    while (true) {
      const ssize_t n = ::recv(d.from, buf, sizeof buf, 0);
      if (n > 0) {
        d.queue.push_back({Clock::now(), std::string(buf, static_cast<std::size_t>(n)), 0});
        proxy.pending_ += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
  }

  // Writes every due chunk it can; false when `d.to` failed.
  bool write_side(Direction& d, bool upward) {
    const auto now = Clock::now();
    while (!d.queue.empty() && due(d.queue.front(), now, upward)) {
      Chunk& c = d.queue.front();
      const std::size_t len = c.bytes.size() - c.offset;
      // Counted as forwarded before the send: once the peer has the bytes
      // (and a test sees their effect) pending_bytes() must not still show
      // them. What did not go out is counted back.
      proxy.pending_ -= len;
      if (upward) proxy.forwarded_up_ += len;
      const ssize_t n = ::send(d.to, c.bytes.data() + c.offset, len, MSG_NOSIGNAL);
      const std::size_t sent = n < 0 ? 0 : static_cast<std::size_t>(n);
      proxy.pending_ += len - sent;
      if (upward) proxy.forwarded_up_ -= len - sent;
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.offset += sent;
      if (c.offset == c.bytes.size()) d.queue.pop_front();
    }
    return true;
  }

  void close_pair(Pair& p) {
    for (const Direction* d : {&p.up, &p.down}) {
      for (const Chunk& c : d->queue) proxy.pending_ -= c.bytes.size() - c.offset;
    }
    ::close(p.up.from);
    ::close(p.up.to);
    p.dead = true;
    --proxy.connections_;
  }

  // How long poll may sleep: until the first delayed chunk is due.
  int timeout_ms() const {
    if (proxy.held_.load()) return -1;
    auto first = Clock::time_point::max();
    for (const Pair& p : pairs) {
      for (const Direction* d : {&p.up, &p.down}) {
        if (d == &p.down && proxy.replies_held_.load()) continue;  // waits for resume()
        if (!d->queue.empty()) first = std::min(first, d->queue.front().read_at);
      }
    }
    if (first == Clock::time_point::max()) return -1;
    const auto at = first + std::chrono::milliseconds(proxy.delay_ms_.load());
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(at - Clock::now()).count();
    return left < 0 ? 0 : static_cast<int>(left);
  }

  void run() {
    while (!proxy.stopping_.load()) {
      if (proxy.drops_.load() != drops_seen) {
        drops_seen = proxy.drops_.load();
        for (Pair& p : pairs) close_pair(p);
        pairs.clear();
        proxy.drops_done_ = drops_seen;
      }
      std::vector<pollfd> fds{{proxy.wake_fd_, POLLIN, 0}, {proxy.listen_fd_, POLLIN, 0}};
      const auto now = Clock::now();
      for (const Pair& p : pairs) {
        for (const Direction* d : {&p.up, &p.down}) {
          short events = POLLIN;
          // Ask for writability only when something is due, or poll spins.
          if (!d->queue.empty() && due(d->queue.front(), now, d == &p.up)) events |= POLLOUT;
          fds.push_back({d->from, POLLIN, 0});
          fds.push_back({d->to, static_cast<short>(events & POLLOUT), 0});
        }
      }
      if (::poll(fds.data(), fds.size(), timeout_ms()) < 0 && errno != EINTR) return;
      if (fds[0].revents & POLLIN) {
        std::uint64_t n;
        (void)!::read(proxy.wake_fd_, &n, sizeof n);
      }
      if (fds[1].revents & POLLIN) accept_one();
      for (Pair& p : pairs) {
        const bool ok = read_side(p.up) && read_side(p.down) && write_side(p.up, true) &&
                        write_side(p.down, false);
        if (!ok) close_pair(p);
      }
      pairs.remove_if([](const Pair& p) { return p.dead; });
    }
    for (Pair& p : pairs) close_pair(p);
  }
};

TcpProxy::TcpProxy(std::uint16_t upstream_port) : upstream_(upstream_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) fail("TcpProxy: socket");
  sockaddr_in a = loopback(0);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    ::close(listen_fd_);
    fail("TcpProxy: bind/listen");
  }
  socklen_t len = sizeof a;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  set_nonblocking(listen_fd_);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    ::close(listen_fd_);
    fail("TcpProxy: eventfd");
  }
  thread_ = std::thread([this] { Loop{*this, {}, 0}.run(); });
}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  wake();
  thread_.join();
  ::close(listen_fd_);
  ::close(wake_fd_);
}

std::string TcpProxy::uri() const {
  return "redis://127.0.0.1:" + std::to_string(port_);
}

void TcpProxy::wake() const {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void TcpProxy::hold() {
  held_ = true;
  wake();
}

void TcpProxy::hold_replies() {
  replies_held_ = true;
  wake();
}

void TcpProxy::resume() {
  held_ = false;
  replies_held_ = false;
  wake();
}

void TcpProxy::set_delay(std::chrono::milliseconds delay) {
  delay_ms_ = delay.count();
  wake();
}

void TcpProxy::drop_all() {
  const unsigned target = ++drops_;
  wake();
  const auto bound = Clock::now() + std::chrono::seconds(10);
  while (drops_done_.load() < target && Clock::now() < bound) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace distlock::test
