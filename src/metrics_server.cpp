// The public MetricsServer: an HTTP endpoint that knows only a snapshot
// function. Its constructors make that function from a Client's or a
// RedlockGroup's shared state, so this file sits above the layers, beside
// client.cpp, and nothing under src/runtime needs the Client's parts.
#include "distlock/metrics_server.hpp"

#include <asio/ip/tcp.hpp>
#include <asio/read_until.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <functional>
#include <thread>

#include "client_impl.hpp"
#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "distlock/redlock.hpp"
#include "redlock_group_state.hpp"

namespace distlock {
namespace {

using asio::ip::tcp;

constexpr std::size_t kMaxHead = 8192;
constexpr std::chrono::seconds kRequestTimeout{5};

struct Response {
  std::string status;  // "200 OK"
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
};

// The request head's first line: "GET /metrics?x HTTP/1.1".
Response answer(std::string_view head, const std::function<std::string()>& render) {
  const auto line = head.substr(0, head.find("\r\n"));
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || !line.substr(sp2 + 1).starts_with("HTTP/1.")) {
    return {"400 Bad Request", "bad request\n"};
  }
  const auto method = line.substr(0, sp1);
  const auto target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const auto path = target.substr(0, target.find('?'));
  if (path != "/metrics") return {"404 Not Found", "not found; metrics are at /metrics\n"};
  if (method != "GET") return {"405 Method Not Allowed", "only GET\n"};
  return {"200 OK", render(), "text/plain; version=0.0.4; charset=utf-8"};
}

// One connection: read the request head, answer, close.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const std::function<std::string()>& render)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), render_(render) {}

  void start() {
    timer_.expires_after(kRequestTimeout);
    timer_.async_wait([self = shared_from_this()](std::error_code ec) {
      std::error_code ignored;
      if (!ec) self->socket_.close(ignored);  // a client that never finishes its request
    });
    asio::async_read_until(socket_, asio::dynamic_buffer(in_, kMaxHead), "\r\n\r\n",
                           [self = shared_from_this()](std::error_code ec, std::size_t) {
                             if (ec == asio::error::not_found) {
                               return self->respond({"400 Bad Request", "request too large\n"});
                             }
                             if (ec) {
                               self->timer_.cancel();
                               return;
                             }
                             self->respond(answer(self->in_, self->render_));
                           });
  }

 private:
  void respond(const Response& r) {
    out_ = "HTTP/1.1 " + r.status + "\r\nContent-Type: " + r.content_type +
           "\r\nContent-Length: " + std::to_string(r.body.size()) +
           "\r\nConnection: close\r\n\r\n" + r.body;
    asio::async_write(socket_, asio::buffer(out_),
                      [self = shared_from_this()](std::error_code, std::size_t) {
                        std::error_code ignored;
                        self->socket_.shutdown(tcp::socket::shutdown_both, ignored);
                        self->socket_.close(ignored);
                        self->timer_.cancel();
                      });
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  const std::function<std::string()>& render_;
  std::string in_;
  std::string out_;
};

// The exposition text of `snapshot()` at each call. Checks `options` now
// rather than at the first scrape (throws Error(invalid_argument)).
std::function<std::string()> renderer(std::function<MetricsSnapshot()> snapshot,
                                      PrometheusOptions options) {
  (void)prometheus_text(MetricsSnapshot{}, options);
  return [snapshot = std::move(snapshot), options = std::move(options)] {
    return prometheus_text(snapshot(), options);
  };
}

}  // namespace

class MetricsServer::Impl {
 public:
  Impl(std::function<MetricsSnapshot()> snapshot,
       PrometheusOptions options,
       std::string host,
       std::uint16_t port)
      : render_(renderer(std::move(snapshot), std::move(options))), host_(std::move(host)) {
    std::error_code ec;
    const auto address = asio::ip::make_address(host_, ec);
    if (ec) {
      throw Error(errc::invalid_argument,
                  "MetricsServer: '" + host_ + "' is not an IPv4 or IPv6 address");
    }
    const tcp::endpoint endpoint(address, port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(endpoint);  // throws std::system_error (asio::system_error)
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }

  ~Impl() {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::uint16_t port() const noexcept { return port_; }
  const std::string& host() const noexcept { return host_; }

 private:
  void accept() {
    acceptor_.async_accept([this](std::error_code ec, tcp::socket socket) {
      if (!ec) std::make_shared<Session>(std::move(socket), render_)->start();
      // Errors such as too many open files end only this accept.
      if (ec != asio::error::operation_aborted) accept();
    });
  }

  const std::function<std::string()> render_;
  const std::string host_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  std::uint16_t port_ = 0;
  std::thread thread_;
};

MetricsServer::MetricsServer(const Client& client,
                             std::string host,
                             std::uint16_t port,
                             PrometheusOptions options) {
  std::shared_ptr<detail::ClientImpl> impl = detail::Access::impl(client);
  if (!impl) throw Error(errc::invalid_argument, "MetricsServer: the Client was moved from");
  auto snapshot = [impl = std::move(impl)] { return impl->metrics_snapshot(); };
  impl_ = std::make_unique<Impl>(std::move(snapshot), std::move(options), std::move(host), port);
}

MetricsServer::MetricsServer(const RedlockGroup& group,
                             std::string host,
                             std::uint16_t port,
                             PrometheusOptions options) {
  std::shared_ptr<detail::RedlockGroupState> state = group.state_;
  if (!state) throw Error(errc::invalid_argument, "MetricsServer: the RedlockGroup was moved from");
  auto snapshot = [state = std::move(state)] { return state->metrics(); };
  impl_ = std::make_unique<Impl>(std::move(snapshot), std::move(options), std::move(host), port);
}

MetricsServer::~MetricsServer() = default;

std::uint16_t MetricsServer::port() const noexcept {
  return impl_->port();
}

const std::string& MetricsServer::host() const noexcept {
  return impl_->host();
}

}  // namespace distlock
