#include "net/connection_transport.hpp"

#include <openssl/ssl.h>

#include <asio/connect.hpp>
#include <asio/ssl/host_name_verification.hpp>

#include "distlock/error.hpp"

namespace distlock::net {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

}  // namespace

ConnectionTransport::ConnectionTransport(asio::io_context& io,
                                         const ClientOptions& options,
                                         asio::ssl::context* tls)
    : io_(io), options_(options), tls_context_(tls), resolver_(io), read_buffer_(kReadChunk) {}

void ConnectionTransport::async_connect(const ClientOptions::Endpoint& to, ConnectHandler done) {
  const auto epoch = ++epoch_;
  auto connected = [this, epoch, host = to.host, done](std::error_code e) mutable {
    if (epoch != epoch_) return;
    if (e) return done(errc::connection_failed, "connect failed: " + e.message());
    on_connected(host, std::move(done));
  };
  if (!options_.unix_path.empty()) {
    unix_ = std::make_unique<asio::local::stream_protocol::socket>(io_);
    unix_->async_connect(asio::local::stream_protocol::endpoint(options_.unix_path),
                         std::move(connected));
    return;
  }
  resolver_.async_resolve(
      to.host, std::to_string(to.port),
      [this, epoch, done = std::move(done), connected = std::move(connected)](
          std::error_code e, asio::ip::tcp::resolver::results_type results) mutable {
        if (epoch != epoch_) return;
        if (e) return done(errc::connection_failed, "cannot resolve host: " + e.message());
        connect_resolved(results, std::move(connected));
      });
}

void ConnectionTransport::connect_resolved(const asio::ip::tcp::resolver::results_type& results,
                                           std::function<void(std::error_code)> connected) {
  asio::ip::tcp::socket* socket = nullptr;
  if (tls_context_ != nullptr) {
    tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket>>(io_, *tls_context_);
    socket = &tls_->next_layer();
  } else {
    tcp_ = std::make_unique<asio::ip::tcp::socket>(io_);
    socket = tcp_.get();
  }
  asio::async_connect(*socket, results,
                      [connected = std::move(connected)](
                          std::error_code ec, const asio::ip::tcp::endpoint&) { connected(ec); });
}

void ConnectionTransport::on_connected(const std::string& host, ConnectHandler done) {
  asio::ip::tcp::socket* socket = tls_ ? &tls_->next_layer() : tcp_.get();
  if (socket != nullptr) {
    std::error_code ignored;
    socket->set_option(asio::ip::tcp::no_delay(true), ignored);
    socket->set_option(asio::socket_base::keep_alive(true), ignored);
  }
  if (!tls_) return done({}, {});

  const std::string& name = options_.tls.server_name.empty() ? host : options_.tls.server_name;
  // SSL_set_tlsext_host_name is a macro with a C cast; call what it expands to.
  SSL_ctrl(tls_->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
           const_cast<char*>(name.c_str()));
  if (options_.tls.verify_peer) {
    tls_->set_verify_mode(asio::ssl::verify_peer);
    tls_->set_verify_callback(asio::ssl::host_name_verification(name));
  } else {
    tls_->set_verify_mode(asio::ssl::verify_none);
  }
  tls_->async_handshake(asio::ssl::stream_base::client,
                        [this, epoch = epoch_, done = std::move(done)](std::error_code e) {
                          if (epoch != epoch_) return;
                          if (e) {
                            return done(errc::connection_failed,
                                        "TLS handshake failed: " + e.message());
                          }
                          done({}, {});
                        });
}

void ConnectionTransport::close() {
  ++epoch_;
  std::error_code ignored;
  resolver_.cancel();
  if (tls_) tls_->next_layer().close(ignored);
  if (tcp_) tcp_->close(ignored);
  if (unix_) unix_->close(ignored);
}

}  // namespace distlock::net
