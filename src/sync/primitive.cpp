#include "sync/primitive.hpp"

#include <charconv>

#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/arguments.hpp"
#include "sync/blocking_call.hpp"
#include "sync/services.hpp"

namespace distlock::sync {
Primitive::Primitive(std::string name, std::string_view what) : name_(std::move(name)) {
  validate_name(name_, what);
}

Value query(const Services& client,
            std::span<const std::string_view> args,
            std::error_code& ec,
            std::string& what) {
  ec.clear();
  Value v = client.call(args, ec);
  if (ec) {
    what = v.is_error() ? v.as_string() : std::string(args[0]) + " failed";
    return Value();
  }
  return v;
}

std::int64_t query_integer(const Services& client,
                           std::span<const std::string_view> args,
                           std::error_code& ec,
                           std::string& what) {
  const Value v = query(client, args, ec, what);
  if (ec) return 0;
  if (!v.is_integer()) {
    ec = errc::protocol_error;
    what = std::string(args[0]) + ": expected integer reply, got ";
    what.append(to_string(v.type()));
    return 0;
  }
  return v.as_integer();
}

bool Primitive::query_locked(const Services& client, std::error_code& ec, std::string& what) const {
  const std::string_view args[] = {"EXISTS", route_key()};
  return query_integer(client, args, ec, what) == 1;
}

std::uint32_t Primitive::query_count(const Services& client,
                                     const std::string& owner,
                                     std::error_code& ec,
                                     std::string& what) const {
  const std::string field = owner_for(owner);
  const std::string_view args[] = {"HGET", route_key(), field};
  const Value v = query(client, args, ec, what);
  if (ec || v.is_nil()) return 0;
  std::uint32_t count = 0;
  const std::string text = v.is_string() ? v.as_string() : std::string();
  const auto [end, parsed] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (parsed != std::errc() || end != text.data() + text.size()) {
    ec = errc::protocol_error;
    what = "HGET: expected a hold count, got " + v.to_string();
    return 0;
  }
  return count;
}

std::optional<std::chrono::milliseconds> Primitive::query_ttl(const Services& client,
                                                              std::error_code& ec,
                                                              std::string& what) const {
  const std::string_view args[] = {"PTTL", route_key()};
  const auto ttl = query_integer(client, args, ec, what);
  if (ec || ttl == -2) return std::nullopt;
  if (ttl == -1) return std::chrono::milliseconds::max();
  return std::chrono::milliseconds(ttl);
}

bool Primitive::force_release(const Services& client,
                              std::error_code& ec,
                              std::string& what) const {
  const std::string_view keys[] = {route_key(), delay_marker()};
  const std::string_view args[] = {unlock_channel(), "0"};
  const std::span<const std::string_view> key_span(keys, delay_marker().empty() ? 1 : 2);
  return force_release_call(client, script::scripts().force_release, key_span, args, ec, what);
}

bool Primitive::force_release_call(const Services& client,
                                   const script::Script& script,
                                   std::span<const std::string_view> keys,
                                   std::span<const std::string_view> args,
                                   std::error_code& ec,
                                   std::string& what) const {
  const Value reply = call_script_blocking(client, route_key(), script, keys, args, ec, what);
  // The server's text for its error reply; the call's name for the rest.
  if (ec && ec != errc::server_error) what = "force_unlock of '" + name_ + "'";
  return !ec && reply.is_integer() && reply.as_integer() == 1;
}

}  // namespace distlock::sync
