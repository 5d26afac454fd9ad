// The byte stream of one connection: TCP, TLS over TCP, or a unix socket.
#pragma once

#include <asio/buffer.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/ssl/context.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/write.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "distlock/client_options.hpp"

namespace distlock::net {

// Opens, reads, writes and closes the stream to one Redis server; knows
// nothing of RESP. Each async_connect() opens a new stream of the kind the
// options ask for: a unix socket when unix_path is set, TLS when a TLS
// context is given, plain TCP otherwise.
//
// Not thread-safe: used on the I/O thread only. Handlers run on the I/O
// thread; whatever keeps the owner alive belongs in them (the transport
// captures nothing of its own).
class ConnectionTransport {
 public:
  using ConnectHandler = std::function<void(std::error_code ec, std::string message)>;

  // `options` and `tls` (null: no TLS) must outlive the transport.
  ConnectionTransport(asio::io_context& io, const ClientOptions& options, asio::ssl::context* tls);
  ConnectionTransport(const ConnectionTransport&) = delete;
  ConnectionTransport& operator=(const ConnectionTransport&) = delete;

  // Resolves `to` and connects (or connects to options.unix_path), sets
  // TCP_NODELAY and SO_KEEPALIVE, and runs the TLS handshake with SNI and,
  // when options.tls.verify_peer, certificate and host name verification (the
  // name is options.tls.server_name, else to.host). `done` runs once: with ec
  // clear when the stream is ready, or errc::connection_failed and a message
  // ("cannot resolve host: ...", "connect failed: ...", "TLS handshake
  // failed: ..."). It never runs when close() or another async_connect()
  // comes first.
  void async_connect(const ClientOptions::Endpoint& to, ConnectHandler done);

  // Writes all of `data`, which the caller keeps unchanged until `done(ec,
  // bytes)` runs. The stream must be open (async_connect succeeded).
  template <class Handler>
  void async_write(const std::string& data, Handler&& done) {
    with_stream([&](auto& stream) {
      asio::async_write(stream, asio::buffer(data), std::forward<Handler>(done));
    });
  }

  // Reads what has arrived, at most one buffer; `done(ec, n)` then finds the
  // bytes at read_data().
  template <class Handler>
  void async_read_some(Handler&& done) {
    with_stream([&](auto& stream) {
      stream.async_read_some(asio::buffer(read_buffer_), std::forward<Handler>(done));
    });
  }
  const char* read_data() const noexcept { return read_buffer_.data(); }

  // Closes the stream and cancels a resolve in progress; pending reads and
  // writes complete with an error, a connect in progress never completes.
  void close();

 private:
  void connect_resolved(const asio::ip::tcp::resolver::results_type& results,
                        std::function<void(std::error_code)> connected);
  void on_connected(const std::string& host, ConnectHandler done);

  template <class F>
  void with_stream(F&& f) {
    if (tls_) {
      f(*tls_);
    } else if (unix_) {
      f(*unix_);
    } else {
      f(*tcp_);
    }
  }

  asio::io_context& io_;
  const ClientOptions& options_;
  asio::ssl::context* tls_context_;
  asio::ip::tcp::resolver resolver_;
  std::unique_ptr<asio::ip::tcp::socket> tcp_;
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket>> tls_;
  std::unique_ptr<asio::local::stream_protocol::socket> unix_;
  std::vector<char> read_buffer_;
  // Bumped by close() and async_connect(): a connect step of an older
  // attempt ignores itself.
  std::uint64_t epoch_ = 0;
};

}  // namespace distlock::net
