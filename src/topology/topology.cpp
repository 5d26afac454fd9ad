#include "topology/topology.hpp"

#include <string>

#include "net/connection.hpp"
#include "net/detached_call.hpp"
#include "resp/encoder.hpp"
#include "script/batch.hpp"
#include "script/scripts.hpp"
#include "topology/coalescer.hpp"

namespace distlock::topology {
namespace {

// A DetachedCall that also keeps its route key and the ScriptCall sending
// it. The ScriptCall completes it as its own last act, so deleting both then
// is safe.
class DetachedScriptCall final : public net::DetachedCall {
 public:
  DetachedScriptCall(Done done,
                     std::string route_key,
                     std::vector<std::string> strings,
                     std::size_t key_count)
      : DetachedCall(std::move(done), std::move(strings)),
        route_key_(std::move(route_key)),
        key_count_(key_count) {}

  std::error_code start(Topology& topology, const script::Script& script) {
    return topology.call(call_, route_key_, script, views().first(key_count_),
                         views().subspan(key_count_), this);
  }

 private:
  std::string route_key_;
  std::size_t key_count_;
  std::optional<script::ScriptCall> call_;
};

}  // namespace

Topology::Topology() = default;
Topology::~Topology() = default;

void Topology::enable_coalescing(runtime::Metrics* metrics) {
  coalescer_ = std::make_unique<Coalescer>(*this, metrics);
}

std::error_code Topology::call(std::optional<script::ScriptCall>& slot,
                               std::string_view route_key,
                               const script::Script& script,
                               std::span<const std::string_view> keys,
                               std::span<const std::string_view> args,
                               net::Completion* next) {
  const script::Script& sent = sharded_publish(route_key) ? script::sharded_twin(script) : script;
  if (coalescer_) {
    const script::BatchInfo info = script::batch_info(sent);
    if (info.cls != script::BatchClass::none) {
      return coalescer_->call(slot, route_key, sent, info, keys, args, next);
    }
  }
  slot.emplace(data_for(route_key), sent, keys, args, next, router(), route_key);
  return slot->start();
}

std::error_code Topology::call_detached(std::string route_key,
                                        const script::Script& script,
                                        std::vector<std::string> keys,
                                        std::vector<std::string> args,
                                        std::function<void(std::error_code, Value)> done) {
  const std::size_t key_count = keys.size();
  keys.insert(keys.end(), std::make_move_iterator(args.begin()),
              std::make_move_iterator(args.end()));
  auto call = std::make_unique<DetachedScriptCall>(std::move(done), std::move(route_key),
                                                   std::move(keys), key_count);
  DetachedScriptCall& started = *call;
  return net::DetachedCall::start(std::move(call),
                                  [&](net::DetachedCall&) { return started.start(*this, script); });
}

std::error_code Topology::command(std::string_view route_key,
                                  std::span<const std::string_view> args,
                                  net::Completion* completion) {
  if (coalescer_ && coalescer_->queue_behind(route_key, args, completion)) return {};
  std::string payload;
  resp::encode_command(payload, args);
  return data_for(route_key).submit(std::move(payload), 1, completion);
}

std::vector<Topology::ChannelRoute> Topology::channel_routes(std::string_view channel,
                                                             std::string_view) {
  std::vector<ChannelRoute> routes;
  for (net::Connection* c : subscribers_for(channel)) routes.push_back({c, false});
  return routes;
}

void Topology::connect_in_background() {
  data_for({}).start();
}

std::size_t Topology::outstanding() {
  return data_for({}).outstanding();
}

bool Topology::connected(std::string_view key) {
  return data_for(key).connected();
}

}  // namespace distlock::topology
