#include "topology/standalone.hpp"

#include "distlock/error.hpp"

namespace distlock::topology {

Standalone::Standalone(asio::io_context& io,
                       const ClientOptions& options,
                       asio::ssl::context* tls,
                       net::Connection::Handlers data_handlers,
                       net::Connection::Handlers subscriber_handlers)
    : io_(io), options_(options), tls_(tls) {
  data_ = std::make_shared<net::Connection>(io_, options_, tls_, net::Connection::Role::data,
                                            std::move(data_handlers));
  subscriber_ = std::make_shared<net::Connection>(
      io_, options_, tls_, net::Connection::Role::subscriber, std::move(subscriber_handlers));
}

Standalone::~Standalone() = default;

net::Connection& Standalone::subscriber_for(std::string_view) {
  subscriber_->start();
  return *subscriber_;
}

void Standalone::connect() {
  std::error_code ec;
  std::string message;
  data_->connect(ec, message);
  if (ec) throw Error(ec, message);
}

void Standalone::close() {
  data_->close();
  subscriber_->close();
}

}  // namespace distlock::topology
