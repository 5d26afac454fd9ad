#include "sync/services.hpp"

#include "distlock/error.hpp"
#include "net/completion.hpp"
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
  const std::string_view key = args.size() > 1 ? args[1] : std::string_view();
  net::SyncCompletion done;
  if ((ec = topology.command(key, args, &done))) return {};
  Value reply = done.wait(ec);
  if (!ec && reply.is_error()) ec = errc::server_error;
  return reply;
}

}  // namespace distlock::sync
