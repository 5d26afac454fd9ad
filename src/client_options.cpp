// ClientOptions built from a URI, and the checks a Client runs on its
// options before it connects.
#include "client_options.hpp"

#include <string>
#include <string_view>

#include "distlock/client_options.hpp"
#include "distlock/error.hpp"
#include "net/uri_parser.hpp"

namespace distlock {

ClientOptions ClientOptions::from_uri(std::string_view uri) {
  return net::UriParser(uri).parse();
}

void validate(const ClientOptions& o) {
  auto bad = [](const std::string& what) { throw Error(errc::invalid_argument, what); };
  if (o.deployment != ClientOptions::Deployment::standalone) {
    if (o.seeds.empty()) bad("ClientOptions: a cluster or sentinel deployment needs seeds");
    if (o.deployment == ClientOptions::Deployment::cluster && o.db != 0) {
      bad("ClientOptions: Redis Cluster has only database 0, got db " + std::to_string(o.db));
    }
  } else if (o.unix_path.empty()) {
    if (o.host.empty()) bad("ClientOptions: host is empty");
    if (o.port == 0) bad("ClientOptions: port 0 is not a valid port");
  } else if (o.unix_path.front() != '/') {
    bad("ClientOptions: unix_path must be absolute: '" + o.unix_path + "'");
  }
  if (o.db < 0) bad("ClientOptions: db must be >= 0, got " + std::to_string(o.db));
  if (o.connect_timeout.count() <= 0) bad("ClientOptions: connect_timeout must be positive");
  if (o.command_timeout.count() <= 0) bad("ClientOptions: command_timeout must be positive");
  if (o.reconnect_min_delay.count() <= 0 || o.reconnect_max_delay < o.reconnect_min_delay) {
    bad("ClientOptions: reconnect delays must satisfy 0 < min <= max");
  }
  if (o.max_queued == 0) bad("ClientOptions: max_queued must be at least 1");
  if (!(o.clock_drift_factor >= 0.0 && o.clock_drift_factor < 0.5)) {
    bad("ClientOptions: clock_drift_factor must be in [0, 0.5), got " +
        std::to_string(o.clock_drift_factor));
  }
  if (o.watchdog_timeout.count() < 30) {
    bad("ClientOptions: watchdog_timeout must be at least 30 ms (renewal runs every third)");
  }
  if (o.min_replicas_acked < 0) {
    bad("ClientOptions: min_replicas_acked must be >= 0, got " +
        std::to_string(o.min_replicas_acked));
  }
  if (o.min_replicas_acked > 0 &&
      (o.replica_ack_timeout.count() <= 0 || o.replica_ack_timeout >= o.command_timeout)) {
    bad("ClientOptions: replica_ack_timeout must be positive and below command_timeout");
  }
  using Sharded = ClientOptions::ShardedPubsub;
  if (o.sharded_pubsub != Sharded::automatic && o.sharded_pubsub != Sharded::on &&
      o.sharded_pubsub != Sharded::off) {
    bad("ClientOptions: sharded_pubsub must be automatic, on or off, got " +
        std::to_string(static_cast<int>(o.sharded_pubsub)));
  }
  if (o.long_hold_warning.count() < 0) bad("ClientOptions: long_hold_warning must be >= 0");
  if (!o.username.empty() && o.password.empty()) {
    bad("ClientOptions: username '" + o.username + "' given without a password");
  }
}

}  // namespace distlock
