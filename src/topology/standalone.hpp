// One Redis server: one data connection and one pub/sub connection.
#pragma once

#include <memory>

#include "net/connection.hpp"
#include "topology/topology.hpp"

namespace distlock::topology {

class Standalone final : public Topology {
 public:
  Standalone(asio::io_context& io,
             const ClientOptions& options,
             asio::ssl::context* tls,
             net::Connection::Handlers data_handlers,
             net::Connection::Handlers subscriber_handlers);
  ~Standalone() override;

  net::Connection& data_for(std::string_view) override { return *data_; }
  net::Connection& subscriber_for(std::string_view) override;
  std::uint64_t batch_group(std::string_view) const override { return 0; }
  void connect() override;
  void close() override;

 private:
  asio::io_context& io_;
  const ClientOptions& options_;
  asio::ssl::context* tls_;
  std::shared_ptr<net::Connection> data_;
  std::shared_ptr<net::Connection> subscriber_;
};

}  // namespace distlock::topology
