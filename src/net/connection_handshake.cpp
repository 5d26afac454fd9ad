#include "net/connection_handshake.hpp"

#include <string_view>
#include <utility>

#include "distlock/error.hpp"
#include "resp/encoder.hpp"

namespace distlock::net {

ConnectionHandshake::ConnectionHandshake(const ClientOptions& options,
                                         const std::vector<std::vector<std::string>>& preload) {
  if (!options.password.empty()) {
    if (options.username.empty()) {
      const std::string_view args[] = {"AUTH", options.password};
      resp::encode_command(payload_, args);
      steps_.push_back("AUTH");
    } else {
      const std::string_view args[] = {"AUTH", options.username, options.password};
      resp::encode_command(payload_, args);
      steps_.push_back("AUTH user '" + options.username + "'");
    }
  }
  if (options.db != 0) {
    const std::string db = std::to_string(options.db);
    const std::string_view args[] = {"SELECT", db};
    resp::encode_command(payload_, args);
    steps_.push_back("SELECT " + db);
  }
  if (!options.client_name.empty()) {
    const std::string_view args[] = {"CLIENT", "SETNAME", options.client_name};
    resp::encode_command(payload_, args);
    steps_.push_back("CLIENT SETNAME");
  }
  if (steps_.empty()) {
    const std::string_view args[] = {"PING"};
    resp::encode_command(payload_, args);
    steps_.push_back("PING");
  }
  if (!options.preload_scripts) return;  // each script loads on its first NOSCRIPT
  for (const auto& command : preload) {
    const std::vector<std::string_view> args(command.begin(), command.end());
    resp::encode_command(payload_, args);
    steps_.emplace_back();  // optional: its error (e.g. NOPERM) is ignored
  }
}

std::error_code ConnectionHandshake::check(Value reply, std::string& message) const {
  message.clear();
  std::vector<Value> replies;
  if (steps_.size() == 1) {
    replies.push_back(std::move(reply));
  } else {
    replies = std::move(reply.as_array());
  }
  for (std::size_t i = 0; i < replies.size() && i < steps_.size(); ++i) {
    if (!replies[i].is_error() || steps_[i].empty()) continue;
    const bool auth = steps_[i].rfind("AUTH", 0) == 0;
    // The server's error text never echoes the password; steps_ holds only a
    // description such as "AUTH user 'alice'".
    message = steps_[i] + " failed: " + replies[i].as_string();
    return auth ? errc::auth_failed : errc::connection_failed;
  }
  return {};
}

}  // namespace distlock::net
