/// \file
/// Fencing tokens enforced on data kept in Redis.
///
/// A lock alone cannot protect data from a holder that was paused (a GC pause,
/// SIGSTOP, a slow disk) past its lease: it resumes believing it still holds
/// the lock and writes over the work of the next holder. A fenced lock
/// (Client::fenced_lock) gives every holding a token that strictly increases
/// across all holders of the name; the protected resource then refuses any
/// write that carries a token older than one it has already seen. These
/// helpers do that for data kept in Redis; docs/fencing.md gives the same rule
/// for SQL and other stores.
///
/// \code
///   distlock::Lock lock = client.fenced_lock("orders:42");
///   distlock::Lease lease = lock.acquire();
///   if (!distlock::fenced_set(client, "orders:42:state", "paid", *lease.fencing_token())) {
///     // Rejected: a newer holder has written. This holder lost the lock.
///   }
/// \endcode
///
/// The rule: a write carrying token T is applied when T >= the highest token
/// any fenced write to that key has carried (kept in fence_key(key)), and the
/// highest token becomes T. An equal token is accepted so that one holding
/// may write several times (reentry keeps its token). The check and the write
/// run in one Lua script, atomically.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace distlock {

class Client;

/// The key where the fenced writes to `key` keep the highest token seen:
///   "distlock_fence:<key>"        when key has a hash tag ("{user:1}:cart"),
///   "distlock_fence:{<key>}"      otherwise,
///   "distlock_fence:{<n>}:<key>"  for a key holding a stray '}' without a
///                                  hash tag, with the smallest number n whose
///                                  slot is the key's.
/// Always in the same Redis Cluster slot as `key`, so one script may touch
/// both. The fence key has no expiry: delete it together with the data when
/// the data goes. Throws Error(invalid_argument) for an empty key.
std::string fence_key(std::string_view key);

/// SET key value, only if `token` is at least the highest token seen for key.
/// Returns true when written, false when rejected (the value and the fence key
/// are then unchanged). Like SET, it removes any expiry the key had.
///
/// Blocks for one round trip. Throws Error: invalid_argument for an empty key
/// (nothing is sent) or when called on the Client's I/O thread; server_error
/// with the server's text when the fence key holds something that is not a
/// token, or for OOM / NOPERM replies; timeout, connection_lost or closed as
/// Client::command. After timeout or connection_lost the write may or may not
/// have been applied; calling again with the same token is safe.
///
/// Thread safety: as Client::command.
bool fenced_set(Client& client, std::string_view key, std::string_view value, std::uint64_t token);
/// As above; never throws: sets ec (and returns false) instead.
bool fenced_set(Client& client,
                std::string_view key,
                std::string_view value,
                std::uint64_t token,
                std::error_code& ec);

///@{
/// HSET key field value under the same rule and the same fence as fenced_set
/// (one fence per key, whatever the command). A key holding another type fails
/// with server_error naming WRONGTYPE and moves no fence.
bool fenced_hset(Client& client,
                 std::string_view key,
                 std::string_view field,
                 std::string_view value,
                 std::uint64_t token);
bool fenced_hset(Client& client,
                 std::string_view key,
                 std::string_view field,
                 std::string_view value,
                 std::uint64_t token,
                 std::error_code& ec);
///@}

}  // namespace distlock
