/// \file
/// Error codes and the exception type of distlock.
///
/// Every failure distlock reports carries a distlock::errc in
/// distlock::error_category(). Blocking calls come in pairs: one throws
/// distlock::Error, the other takes a std::error_code& and never throws for the
/// failures listed here. Messages never contain a password.
#pragma once

#include <string>
#include <system_error>

namespace distlock {

/// Every failure distlock reports (the values of error_category()).
enum class errc {
  /// A bad argument was rejected before anything was sent to Redis.
  invalid_argument = 1,
  /// The first connection to the server could not be made (refused, DNS,
  /// connect timeout, TLS handshake failure).
  connection_failed,
  /// The connection dropped while the command was in flight. The command may or
  /// may not have run on the server; distlock never re-sends it by itself.
  connection_lost,
  /// No reply arrived within the command timeout (or a wait ran out).
  timeout,
  /// The server rejected the credentials (WRONGPASS, NOAUTH, bad ACL user).
  auth_failed,
  /// The server answered with an error reply (WRONGTYPE, NOPERM, OOM, ...).
  /// The message carries the server's text.
  server_error,
  /// The server sent bytes that are not valid RESP.
  protocol_error,
  /// An unlock or release came from someone who does not hold the lock.
  not_owner,
  /// The lease expired or was taken away before the holder released it.
  lease_lost,
  /// The Client was closed; nothing more can be sent through it.
  closed,
  /// More commands are queued than ClientOptions::max_queued allows.
  queue_full,
  /// An asynchronous operation was cancelled before it completed.
  cancelled,
  /// Fewer replicas than ClientOptions::min_replicas_acked acknowledged an
  /// acquire within replica_ack_timeout: the acquire was undone.
  replication_failed,
  /// The Client's backend cannot provide this primitive or option (a fair
  /// lock on ZooKeeper, a fixed lease on a session-held lock, a Redis
  /// command on a non-Redis Client). Reported at once, before any I/O; the
  /// message names the backend and what it lacks (docs/backends.md).
  not_supported,
};

/// The category of distlock::errc; name() is "distlock".
const std::error_category& error_category() noexcept;

/// `e` in error_category(); lets std::error_code ec = errc::timeout compile.
std::error_code make_error_code(errc e) noexcept;

/// The exception thrown by the blocking API. code() is always in
/// distlock::error_category(); what() starts with a message naming the problem.
class Error : public std::system_error {
 public:
  ///@{
  /// An exception for `code`; what() is `what` (or the code's message alone).
  explicit Error(errc code);
  Error(errc code, const std::string& what);
  Error(std::error_code code, const std::string& what);
  ///@}
};

}  // namespace distlock

/// \cond
template <>
struct std::is_error_code_enum<distlock::errc> : std::true_type {};
/// \endcond
