// Lock's force_unlock and its queries of the server (is_locked, hold_count,
// remaining_ttl, ...), each in a throwing and an error_code& form.
#include <charconv>

#include "distlock/error.hpp"
#include "distlock/lock.hpp"
#include "runtime/executor.hpp"
#include "runtime/identity.hpp"
#include "script/scripts.hpp"
#include "sync/lock_args.hpp"
#include "sync/lock_keys.hpp"
#include "sync/services.hpp"
#include "topology/topology.hpp"

namespace distlock {
namespace {

using std::chrono::milliseconds;
using sync::or_throw;

}  // namespace

static bool force_release(const sync::Services& client,
                          const sync::LockKeys& lock,
                          std::error_code& ec,
                          std::string& what) {
  const std::string_view keys[] = {lock.name};
  const std::string_view args[] = {lock.channel, "0"};
  ec.clear();
  what = "force_unlock of '" + lock.name + "'";
  if (!client.executor.may_block(ec)) return false;
  net::SyncCompletion done;
  std::optional<script::ScriptCall> call;
  if ((ec = client.topology.call(call, lock.name, script::scripts().force_release, keys, args,
                                 &done))) {
    return false;
  }
  Value reply = done.wait(ec);
  if (ec) return false;
  if (reply.is_error()) {
    ec = errc::server_error;
    what = reply.as_string();
    return false;
  }
  return reply.is_integer() && reply.as_integer() == 1;
}

bool Lock::force_unlock() {
  return or_throw([&](std::error_code& ec, std::string& what) {
    return force_release(*client_, *keys_, ec, what);
  });
}

bool Lock::force_unlock(std::error_code& ec) {
  std::string what;
  return force_release(*client_, *keys_, ec, what);
}

// One query round trip. On failure sets ec and `what` (the server's text for
// an error reply) and returns nil.
static Value query(const sync::Services& client,
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

// As query, for a command answering an integer: 0 with ec set on failure,
// protocol_error for a reply of another type.
static std::int64_t query_integer(const sync::Services& client,
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

static bool exists(const sync::Services& client,
                   const sync::LockKeys& lock,
                   std::error_code& ec,
                   std::string& what) {
  const std::string_view args[] = {"EXISTS", lock.name};
  return query_integer(client, args, ec, what) == 1;
}

bool Lock::is_locked() const {
  return or_throw(
      [&](std::error_code& ec, std::string& what) { return exists(*client_, *keys_, ec, what); });
}

bool Lock::is_locked(std::error_code& ec) const {
  std::string what;
  return exists(*client_, *keys_, ec, what);
}

static bool held_here(const sync::Services& client,
                      const sync::LockKeys& lock,
                      std::error_code& ec,
                      std::string& what) {
  const std::string owner = runtime::thread_owner(client.client_id);
  const std::string_view args[] = {"HEXISTS", lock.name, owner};
  return query_integer(client, args, ec, what) == 1;
}

bool Lock::is_held_by_current_thread() const {
  return or_throw([&](std::error_code& ec, std::string& what) {
    return held_here(*client_, *keys_, ec, what);
  });
}

bool Lock::is_held_by_current_thread(std::error_code& ec) const {
  std::string what;
  return held_here(*client_, *keys_, ec, what);
}

static std::uint32_t count_here(const sync::Services& client,
                                const sync::LockKeys& lock,
                                std::error_code& ec,
                                std::string& what) {
  const std::string owner = runtime::thread_owner(client.client_id);
  const std::string_view args[] = {"HGET", lock.name, owner};
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

std::uint32_t Lock::hold_count() const {
  return or_throw([&](std::error_code& ec, std::string& what) {
    return count_here(*client_, *keys_, ec, what);
  });
}

std::uint32_t Lock::hold_count(std::error_code& ec) const {
  std::string what;
  return count_here(*client_, *keys_, ec, what);
}

static std::optional<milliseconds> ttl(const sync::Services& client,
                                       const sync::LockKeys& lock,
                                       std::error_code& ec,
                                       std::string& what) {
  const std::string_view args[] = {"PTTL", lock.name};
  const auto ttl = query_integer(client, args, ec, what);
  if (ec || ttl == -2) return std::nullopt;
  if (ttl == -1) return milliseconds::max();
  return milliseconds(ttl);
}

std::optional<milliseconds> Lock::remaining_ttl() const {
  return or_throw(
      [&](std::error_code& ec, std::string& what) { return ttl(*client_, *keys_, ec, what); });
}

std::optional<milliseconds> Lock::remaining_ttl(std::error_code& ec) const {
  std::string what;
  return ttl(*client_, *keys_, ec, what);
}

}  // namespace distlock
