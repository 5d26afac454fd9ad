#include "distlock/client_async.hpp"

#include <asio/system_executor.hpp>

#include "client_impl.hpp"
#include "net/detached_call.hpp"
#include "runtime/executor.hpp"

namespace distlock::detail {

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
  // std::function needs a copyable callable: the receiver is shared.
  std::shared_ptr<AsyncReceiver> r(std::move(receiver));
  if (!ec) {
    // Owns the arguments and the receiver until the reply comes.
    auto op = std::make_unique<net::DetachedCall>(
        [r](std::error_code e, Value reply) {
          if (!e && reply.is_error()) e = errc::server_error;
          r->complete(e, std::move(reply));
        },
        std::move(args));
    ec = net::DetachedCall::start(std::move(op), [&](net::DetachedCall& call) {
      return client->submit(call.views(), &call);
    });
  }
  if (ec) {
    // Never complete inside the initiating call; the system executor runs
    // this even when the Client's I/O thread has stopped.
    asio::post(asio::system_executor(), [r, ec] { r->complete(ec, {}); });
  }
}

}  // namespace distlock::detail
