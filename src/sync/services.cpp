#include "sync/services.hpp"

#include "distlock/error.hpp"
#include "net/connection.hpp"
#include "resp/encoder.hpp"
#include "runtime/executor.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {

Value Services::call(std::span<const std::string_view> args, std::error_code& ec) const {
  ec.clear();
  if (!executor.may_block(ec)) return {};
  if (args.empty()) {
    ec = errc::invalid_argument;
    return {};
  }
  std::string payload;
  resp::encode_command(payload, args);
  const std::string_view key = args.size() > 1 ? args[1] : std::string_view();
  net::SyncCompletion done;
  if ((ec = topology.data_for(key).submit(std::move(payload), 1, &done))) return {};
  Value reply = done.wait(ec);
  if (!ec && reply.is_error()) ec = errc::server_error;
  return reply;
}

}  // namespace distlock::sync
