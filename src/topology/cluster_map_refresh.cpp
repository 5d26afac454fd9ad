#include "topology/cluster_map_refresh.hpp"

#include <array>
#include <asio/post.hpp>
#include <optional>
#include <string_view>

#include "net/detached_call.hpp"
#include "resp/encoder.hpp"

namespace distlock::topology {
namespace {

constexpr std::chrono::milliseconds kRefreshWhileUnhealthy{250};

}  // namespace

ClusterMapRefresh::ClusterMapRefresh(asio::io_context& io,
                                     ClusterNodePool& pool,
                                     std::function<void()> on_moved)
    : io_(io), pool_(pool), on_moved_(std::move(on_moved)) {}

void ClusterMapRefresh::refresh() {
  if (refreshing_) {
    refresh_again_ = true;
    return;
  }
  net::Connection* c = pool_.map_source();
  if (!c) return;
  refreshing_ = true;
  ask(*c, true);
}

void ClusterMapRefresh::stop() {
  asio::post(io_, [this] {
    if (timer_) timer_->cancel();
  });
}

void ClusterMapRefresh::ask(net::Connection& c, bool shards) {
  auto done =
      std::make_unique<net::DetachedCall>([this, &c, shards](std::error_code ec, Value reply) {
        if (!ec && shards && cluster_slots_instead(reply)) return ask(c, false);
        on_map(ec, reply, shards);
      });
  std::string payload;
  const std::array<std::string_view, 2> args{"CLUSTER", shards ? "SHARDS" : "SLOTS"};
  resp::encode_command(payload, args);
  if (net::DetachedCall::start(std::move(done), [&](net::DetachedCall& call) {
        return c.submit(std::move(payload), 1, &call);
      })) {
    refreshing_ = false;
  }
}

void ClusterMapRefresh::on_map(std::error_code ec, const Value& reply, bool shards) {
  refreshing_ = false;
  std::optional<std::vector<SlotRange>> ranges;
  if (!ec) ranges = parse_cluster_map(reply, shards);
  const auto installed = pool_.install(ranges);
  if (!installed) return;
  // Slots moved to another master: check every lease now (a failover may
  // have lost keys), and send pending releases again.
  if (installed->moved && on_moved_) on_moved_();
  pool_.move_subscriber_if_stranded();
  if (refresh_again_) {
    refresh_again_ = false;
    return refresh();
  }
  if (installed->unhealthy) refresh_soon();
}

void ClusterMapRefresh::refresh_soon() {
  if (refresh_scheduled_) return;
  refresh_scheduled_ = true;
  if (!timer_) timer_ = std::make_shared<asio::steady_timer>(io_);
  timer_->expires_after(kRefreshWhileUnhealthy);
  timer_->async_wait([this](std::error_code ec) {
    refresh_scheduled_ = false;
    if (!ec) refresh();
  });
}

}  // namespace distlock::topology
