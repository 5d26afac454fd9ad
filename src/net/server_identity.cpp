#include "net/server_identity.hpp"

namespace distlock::net {

std::string server_identity(const ClientOptions& o) {
  if (!o.unix_path.empty()) return "unix:" + o.unix_path;
  const std::string port = std::to_string(o.port);
  if (o.host.find(':') != std::string::npos) return "[" + o.host + "]:" + port;
  return o.host + ":" + port;
}

}  // namespace distlock::net
