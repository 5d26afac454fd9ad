/// \file
/// A tiny HTTP endpoint for Prometheus: GET /metrics answers
/// prometheus_text() of a Client or a RedlockGroup with Content-Type
/// "text/plain; version=0.0.4".
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "distlock/metrics.hpp"

namespace distlock {

class Client;
class RedlockGroup;

/// Listens on `host`:`port` and serves, on its own thread, each connection one
/// HTTP/1.1 response and then closes it (Connection: close):
///   GET /metrics (any query string)  -> 200, the exposition text
///   any other path                   -> 404
///   another method                   -> 405
///   a request that does not parse, or a head over 8 KiB -> 400
/// A connection that sends no complete request head within 5 s is closed.
/// Rendering reads the Client's atomic counters only: serving never blocks the
/// Client or its I/O thread, and a slow scraper holds up only itself.
///
/// The server keeps the Client's shared state alive (the Client may be moved;
/// closing it leaves the metrics readable). Not copyable or movable; any
/// thread may construct and destroy it.
class MetricsServer {
 public:
  /// `host`: an IPv4 or IPv6 address literal ("127.0.0.1", "::1", "0.0.0.0");
  /// `port` 0 lets the system pick a free port (see port()). Throws
  /// Error(errc::invalid_argument) for a host that is not an address literal
  /// or a moved-from Client (before listening), and std::system_error with the
  /// system's code when it cannot listen there (address in use, no
  /// permission).
  explicit MetricsServer(const Client& client,
                         std::string host = "127.0.0.1",
                         std::uint16_t port = 0,
                         PrometheusOptions options = {});
  /// The same endpoint for a RedlockGroup's metrics (RedlockGroup::metrics());
  /// it keeps the group's shared state alive. Throws as above (a moved-from
  /// group is invalid_argument).
  explicit MetricsServer(const RedlockGroup& group,
                         std::string host = "127.0.0.1",
                         std::uint16_t port = 0,
                         PrometheusOptions options = {});
  /// Stops listening, closes open connections and joins its thread.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  /// The port it listens on (the one picked when constructed with 0).
  std::uint16_t port() const noexcept;
  /// The address it listens on, as given.
  const std::string& host() const noexcept;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace distlock
