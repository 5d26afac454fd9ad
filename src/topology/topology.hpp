// Topology: which connection serves a key. Standalone, Sentinel and Cluster
// (slot routing, MOVED/ASK) implement the same interface, so the primitives
// never know which one they run on. Quorum (a RedlockGroup's masters) sends
// each call to every node and answers with the majority's verdict.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "distlock/value.hpp"
#include "script/script.hpp"

// Connections are only named here: keeping net/connection.hpp (Asio's
// sockets and SSL) out of this header keeps it out of every primitive.
namespace distlock::net {
class Connection;
}
namespace distlock::runtime {
class Metrics;
}

namespace distlock::topology {

class Coalescer;

class Topology {
 public:
  Topology();
  virtual ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  // From now on call() coalesces the calls of batching scripts and
  // command() queues behind calls that wait (topology/coalescer.hpp);
  // `metrics` (may be null) counts the calls and their sizes. Before any
  // call; the Client does it unless ClientOptions::coalesce is false.
  void enable_coalescing(runtime::Metrics* metrics);
  // The data connection that serves `key` (every key of one primitive hashes
  // to one slot, so one connection serves them all).
  virtual net::Connection& data_for(std::string_view key) = 0;
  // The pub/sub connection for `channel`.
  virtual net::Connection& subscriber_for(std::string_view channel) = 0;
  // Every pub/sub connection a waiter on `channel` subscribes on: the one
  // above, or one per node of a quorum (the first message wakes).
  virtual std::vector<net::Connection*> subscribers_for(std::string_view channel) {
    return {&subscriber_for(channel)};
  }
  // Where a waiter subscribes to `channel`, a channel of the primitive whose
  // calls are routed by `route_key`: on which connections, and whether with
  // SSUBSCRIBE (sharded pub/sub, ClientOptions::sharded_pubsub) or
  // SUBSCRIBE. The default: subscribers_for(channel), classic.
  struct ChannelRoute {
    net::Connection* connection;
    bool sharded;
  };
  virtual std::vector<ChannelRoute> channel_routes(std::string_view channel,
                                                   std::string_view route_key);
  // Whether the scripts routed by `route_key` publish with SPUBLISH: only a
  // Cluster in sharded mode says so, and only for names whose channels
  // share their slot (channels_share_slot). call() then sends the script's
  // sharded twin (script::sharded_twin) instead of the script.
  virtual bool sharded_publish(std::string_view /*route_key*/) const { return false; }
  // What waiters do when a (S)SUBSCRIBE was answered with the error `reply`:
  // fail (the default: report it to the waiters), resubscribe now (a MOVED
  // this topology has followed: the channel's route changed), or
  // resubscribe after a short wait (a transient refusal during a failover).
  enum class Refusal { fail, retry_now, retry_later };
  virtual Refusal subscribe_refused(const Value& /*reply*/) { return Refusal::fail; }
  // Holdings whose route keys share a group are renewed in one script call:
  // one group per node standalone, one per slot under Cluster (a batch must
  // never be CROSSSLOT).
  virtual std::uint64_t batch_group(std::string_view key) const = 0;
  // Makes the first connections; throws Error on failure.
  virtual void connect() = 0;
  // connect() without blocking or failing (Redlock: a node may be
  // down when its group is made): calls queue until the connections are up,
  // and failed connects retry with backoff until close(). The default
  // starts data_for("")'s connection, which is all a single server has.
  virtual void connect_in_background();
  // Requests queued or in flight on the data connections (a gauge).
  virtual std::size_t outstanding();
  // Whether the data connection serving `key` is up now.
  virtual bool connected(std::string_view key);
  virtual void close() = 0;

  // One command (verb and arguments), routed by `route_key`; `completion`
  // gets its reply. An error means it was not queued (closed, queue_full)
  // and `completion` will not be called. Cluster follows MOVED/ASK and
  // retries transient refusals here (net/router.hpp).
  virtual std::error_code command(std::string_view route_key,
                                  std::span<const std::string_view> args,
                                  net::Completion* completion);

  // Cluster's redirection policy for script calls; null for one server.
  virtual net::Router* router() noexcept { return nullptr; }

  // One script call routed by `route_key`, the key all of `keys` share a
  // slot with: EVALSHA, and EVAL once after NOSCRIPT; under Cluster also
  // MOVED/ASK and transient refusals, in one place for every primitive. The call lives in
  // `slot`; `keys` and `args` must stay valid until `next` completes. An
  // error means it was not queued and `next` will not be called.
  // A Quorum leaves `slot` empty: it copies `keys` and `args` and owns the
  // fan-out itself. With coalescing on, a call made while another call of
  // its group is in flight waits for that one's outcome and then goes out
  // with the others that waited, as one batch call; `slot` stays empty then
  // unless it goes out alone.
  virtual std::error_code call(std::optional<script::ScriptCall>& slot,
                               std::string_view route_key,
                               const script::Script& script,
                               std::span<const std::string_view> keys,
                               std::span<const std::string_view> args,
                               net::Completion* next);

  // One script call nobody waits for: as call(), but the call owns its
  // route key, `keys` and `args` (a net::DetachedCall), and hands its outcome
  // to `done` (empty: nothing to do with it). An error means it was not
  // queued; `done` is not called then.
  std::error_code call_detached(std::string route_key,
                                const script::Script& script,
                                std::vector<std::string> keys,
                                std::vector<std::string> args,
                                std::function<void(std::error_code, Value)> done);

  // Null unless enable_coalescing() ran.
  Coalescer* coalescer() noexcept { return coalescer_.get(); }

 private:
  std::unique_ptr<Coalescer> coalescer_;
};

}  // namespace distlock::topology
