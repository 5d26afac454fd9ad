#include "distlock/fencing.hpp"

#include <array>
#include <string>

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/arguments.hpp"
#include "sync/blocking_call.hpp"
#include "sync/services.hpp"
#include "topology/slot.hpp"

namespace distlock {
namespace {

constexpr std::string_view kPrefix = "distlock_fence:";

// Runs the script; sets ec and, when there is one, message.
bool fenced_write(Client& client,
                  std::string_view key,
                  std::span<const std::string_view> args,
                  std::error_code& ec,
                  std::string& message) {
  ec.clear();
  if (key.empty()) {
    ec = errc::invalid_argument;
    message = "fenced write: the key is empty";
    return false;
  }
  if (!detail::Access::impl(client)) {
    ec = errc::closed;
    message = "fenced write: the client was moved from";
    return false;
  }
  const std::shared_ptr<sync::Services> impl = sync::services_of(detail::Access::impl(client));
  if (!impl) {
    ec = errc::not_supported;
    message = "fenced write: needs a Redis client (a fenced write is a Redis script)";
    return false;
  }
  const std::string fence = fence_key(key);
  const std::array<std::string_view, 2> keys = {key, fence};
  std::string what;
  const Value reply =
      sync::call_script_blocking(*impl, key, script::scripts().fenced_write, keys, args, ec, what);
  if (ec) {
    message = "fenced write to '" + std::string(key) +
              (ec == errc::server_error ? "' failed: " : "': ") + what;
    return false;
  }
  if (!reply.is_integer()) {
    ec = errc::protocol_error;
    message = "fenced write: unexpected reply " + reply.to_string();
    return false;
  }
  return reply.as_integer() == 1;
}

bool throwing(bool written, const std::error_code& ec, const std::string& message) {
  sync::throw_if(ec, message);
  return written;
}

}  // namespace

std::string fence_key(std::string_view key) {
  using topology::hash_tag;
  using topology::key_slot;
  if (key.empty()) throw Error(errc::invalid_argument, "fence_key: the key is empty");
  // A hash tag of its own: the prefix has no brace, so the tag stays the key's.
  if (hash_tag(key).size() != key.size()) return std::string(kPrefix) + std::string(key);
  const auto slot = key_slot(key);
  std::string wrapped = std::string(kPrefix) + "{" + std::string(key) + "}";
  if (key_slot(wrapped) == slot) return wrapped;
  // A '}' inside the key cut the wrapped tag short ("a}b"): find a short tag
  // with the key's slot. Deterministic, so every client derives the same key.
  for (unsigned i = 0;; ++i) {
    const std::string candidate = std::to_string(i);
    if (key_slot(candidate) == slot) {
      return std::string(kPrefix) + "{" + candidate + "}:" + std::string(key);
    }
  }
}

bool fenced_set(Client& client,
                std::string_view key,
                std::string_view value,
                std::uint64_t token,
                std::error_code& ec) {
  const std::string token_text = std::to_string(token);
  const std::array<std::string_view, 3> args = {token_text, "set", value};
  std::string message;
  return fenced_write(client, key, args, ec, message);
}

bool fenced_set(Client& client, std::string_view key, std::string_view value, std::uint64_t token) {
  const std::string token_text = std::to_string(token);
  const std::array<std::string_view, 3> args = {token_text, "set", value};
  std::error_code ec;
  std::string message;
  const bool written = fenced_write(client, key, args, ec, message);
  return throwing(written, ec, message);
}

bool fenced_hset(Client& client,
                 std::string_view key,
                 std::string_view field,
                 std::string_view value,
                 std::uint64_t token,
                 std::error_code& ec) {
  const std::string token_text = std::to_string(token);
  const std::array<std::string_view, 4> args = {token_text, "hset", field, value};
  std::string message;
  return fenced_write(client, key, args, ec, message);
}

bool fenced_hset(Client& client,
                 std::string_view key,
                 std::string_view field,
                 std::string_view value,
                 std::uint64_t token) {
  const std::string token_text = std::to_string(token);
  const std::array<std::string_view, 4> args = {token_text, "hset", field, value};
  std::error_code ec;
  std::string message;
  const bool written = fenced_write(client, key, args, ec, message);
  return throwing(written, ec, message);
}

}  // namespace distlock
