#include "distlock/client_async.hpp"

#include <asio/system_executor.hpp>

#include "client_impl.hpp"
#include "runtime/executor.hpp"

namespace distlock::detail {
namespace {

// Owns the arguments and the receiver until the reply comes.
class AsyncCommand final : public net::Completion {
 public:
  AsyncCommand(std::vector<std::string> args, std::unique_ptr<AsyncReceiver> receiver)
      : args_(std::move(args)), receiver_(std::move(receiver)) {}

  void complete(std::error_code ec, Value reply) override {
    std::unique_ptr<AsyncCommand> self(this);
    if (!ec && reply.is_error()) ec = errc::server_error;
    receiver_->complete(ec, std::move(reply));
  }

  std::vector<std::string_view> views() const {
    return std::vector<std::string_view>(args_.begin(), args_.end());
  }

 private:
  std::vector<std::string> args_;
  std::unique_ptr<AsyncReceiver> receiver_;
};

}  // namespace

asio::any_io_executor client_executor(const sync::Services& services) {
  // A closed Client's I/O thread has stopped: handlers without an executor of
  // their own then run on the system executor so they still run.
  if (services.executor.closed()) return asio::system_executor();
  return services.executor.io().get_executor();
}

asio::any_io_executor client_executor(const std::shared_ptr<ClientImpl>& client) {
  return client_executor(client->services());
}

void async_command_impl(const std::shared_ptr<ClientImpl>& client,
                        std::vector<std::string> args,
                        std::unique_ptr<AsyncReceiver> receiver) {
  std::error_code ec;
  if (client->closed()) {
    ec = errc::closed;
  } else if (args.empty()) {
    ec = errc::invalid_argument;
  }
  auto* op = new AsyncCommand(std::move(args), std::move(receiver));
  if (!ec) {
    const auto views = op->views();
    ec = client->submit(views, op);
  }
  if (ec) {
    // Never complete inside the initiating call; the system executor runs
    // this even when the Client's I/O thread has stopped.
    asio::post(asio::system_executor(), [op, ec] { op->complete(ec, {}); });
  }
}

}  // namespace distlock::detail
