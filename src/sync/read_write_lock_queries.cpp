// The read-write lock's queries: its hash holds both sides, so "locked"
// depends on the side asking ('mode', and for readers the writer's own reads).
#include "sync/read_write_lock_sides.hpp"

namespace distlock::sync {
namespace {

// The hash's 'mode' field: "read", "write", or "" when not locked.
std::string query_mode(const Services& client,
                       const std::string& name,
                       std::error_code& ec,
                       std::string& what) {
  const std::string_view args[] = {"HGET", name, "mode"};
  const Value v = query(client, args, ec, what);
  if (ec || !v.is_string()) return {};
  return v.as_string();
}

// The hash's PTTL when `held`, else nullopt (as Primitive::query_ttl).
std::optional<std::chrono::milliseconds> ttl_if(
    bool held, const Primitive& p, const Services& client, std::error_code& ec, std::string& what) {
  if (ec || !held) return std::nullopt;
  return p.Primitive::query_ttl(client, ec, what);
}

}  // namespace

bool ReadSide::query_locked(const Services& client, std::error_code& ec, std::string& what) const {
  const std::string mode = query_mode(client, name(), ec, what);
  if (mode == "read") return true;
  if (mode != "write") return false;
  // Write-held: read-held too when the hash has more than 'mode' and the
  // writer's field (the writer's own read holds).
  const std::string_view args[] = {"HLEN", name()};
  return query_integer(client, args, ec, what) > 2;
}

std::optional<std::chrono::milliseconds> ReadSide::query_ttl(const Services& client,
                                                             std::error_code& ec,
                                                             std::string& what) const {
  const bool held = query_locked(client, ec, what);
  return ttl_if(held, *this, client, ec, what);
}

bool WriteSide::query_locked(const Services& client, std::error_code& ec, std::string& what) const {
  return query_mode(client, name(), ec, what) == "write";
}

std::optional<std::chrono::milliseconds> WriteSide::query_ttl(const Services& client,
                                                              std::error_code& ec,
                                                              std::string& what) const {
  const bool held = query_locked(client, ec, what);
  return ttl_if(held, *this, client, ec, what);
}

}  // namespace distlock::sync
