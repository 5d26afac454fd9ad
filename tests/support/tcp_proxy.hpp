// A TCP proxy on loopback for fault tests (issue 13): a client connects to
// the proxy's port and its bytes reach an upstream port on 127.0.0.1 through
// it, so a test can hold, delay or drop one server's traffic without root,
// netem or network namespaces (none of which the CI machine offers).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace distlock::test {

// Thread-safe: every member may be called from any thread. One thread of its
// own forwards all connections (poll on non-blocking sockets).
class TcpProxy {
 public:
  // Listens on a free 127.0.0.1 port and forwards each accepted connection to
  // a new connection to 127.0.0.1:upstream_port (made when accepted; a
  // refused upstream closes the client's connection). Throws
  // std::system_error if the proxy cannot listen.
  explicit TcpProxy(std::uint16_t upstream_port);
  // Stops the thread and closes every socket. Never throws.
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  std::uint16_t port() const { return port_; }
  // "redis://127.0.0.1:<port()>".
  std::string uri() const;

  // Stops forwarding in both directions. Bytes are still read and kept, in
  // order, and go on resume(); connections stay open, and new ones are
  // accepted (their bytes held too). To the client it looks like a server
  // or network that stopped answering, as after SIGSTOP or a silent drop.
  void hold();
  // Stops forwarding in the upstream's direction only: requests reach the
  // server and run there, their replies are kept (a reply lost on its way,
  // as far as the client can tell). resume() ends it.
  void hold_replies();
  // Forwards again, everything held first.
  void resume();
  // From now on, each byte is forwarded no earlier than `delay` after the
  // proxy read it (zero: at once). Applies to bytes already waiting too.
  void set_delay(std::chrono::milliseconds delay);
  // Closes every current connection on both sides (the client sees the
  // connection reset or closed; held bytes are discarded). Returns once
  // they are closed. New connections are accepted as usual.
  void drop_all();

  // Bytes read but not yet forwarded (held or delayed), both directions: for
  // a test to wait until a request is being held.
  std::size_t pending_bytes() const { return pending_.load(); }
  // Bytes forwarded from clients to the upstream since the start.
  std::size_t forwarded_upstream() const { return forwarded_up_.load(); }
  // Connections open now (client side).
  std::size_t connections() const { return connections_.load(); }

 private:
  struct Loop;
  void wake() const;

  std::uint16_t upstream_;
  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::atomic<bool> held_{false};
  std::atomic<bool> replies_held_{false};
  std::atomic<std::int64_t> delay_ms_{0};
  std::atomic<unsigned> drops_{0};
  std::atomic<unsigned> drops_done_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> pending_{0};
  std::atomic<std::size_t> forwarded_up_{0};
  std::atomic<std::size_t> connections_{0};
  std::thread thread_;
};

}  // namespace distlock::test
