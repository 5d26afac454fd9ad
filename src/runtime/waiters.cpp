#include "runtime/waiters.hpp"

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <atomic>
#include <functional>
#include <vector>

#include "distlock/error.hpp"
#include "net/connection.hpp"
#include "net/detached_call.hpp"
#include "resp/encoder.hpp"
#include "topology/topology.hpp"

namespace distlock::runtime {
namespace {

// The outcome of a (S)SUBSCRIBE: success goes to `on_ok`, an error reply
// (NOPERM for a channel the ACL user may not use, MOVED for a shard channel
// whose slot moved) to `on_refused`. A lost connection is neither: the
// reconnect resubscribes.
net::DetachedCall::Done channel_reply(std::function<void()> on_ok,
                                      std::function<void(const Value&)> on_refused) {
  return [on_ok = std::move(on_ok), on_refused = std::move(on_refused)](std::error_code ec,
                                                                        Value reply) {
    if (ec) return;
    if (reply.is_error()) {
      on_refused(reply);
    } else if (reply.is_array()) {
      on_ok();
    }
  };
}

// Sends `payload` with a completion running `done`; not queued (closing, or
// the queue is full) it is dropped.
void submit_detached(net::Connection& connection,
                     std::string payload,
                     net::DetachedCall::Done done) {
  net::DetachedCall::start(
      std::make_unique<net::DetachedCall>(std::move(done)),
      [&](net::DetachedCall& c) { return connection.submit(std::move(payload), 1, &c); });
}

std::atomic<std::chrono::milliseconds::rep> linger_ms{Waiters::kLinger.count()};

}  // namespace

std::chrono::milliseconds subscription_linger() noexcept {
  return std::chrono::milliseconds(linger_ms.load());
}

void set_subscription_linger(std::chrono::milliseconds linger) noexcept {
  linger_ms.store(linger.count());
}

struct Waiters::LingerTimer {
  explicit LingerTimer(asio::io_context& io) : timer(io) {}
  asio::steady_timer timer;
};

Waiters::Waiters(topology::Topology& topology, asio::io_context& io)
    : topology_(topology), timer_(std::make_unique<LingerTimer>(io)) {}

Waiters::~Waiters() = default;

void Waiters::subscribe(const std::string& channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  // One connection, or every node of a quorum: the first confirmation wakes
  // the waiters, and so does the first message of a release.
  for (const auto& route : topology_.channel_routes(channel, it->second.route_key)) {
    std::string payload;
    resp::encode_command(payload, {route.sharded ? "SSUBSCRIBE" : "SUBSCRIBE", channel});
    // Not queued (closing, or the queue is full): waiters fall back on their
    // TTL timers, and a reconnect resubscribes.
    submit_detached(*route.connection, std::move(payload),
                    channel_reply([this, channel] { confirmed(channel); },
                                  [this, channel](const Value& why) { refused(channel, why); }));
  }
}

void Waiters::unsubscribe(const std::string& channel, std::string_view route_key) {
  for (const auto& route : topology_.channel_routes(channel, route_key)) {
    std::string payload;
    if (route.sharded) {
      // The server answers SUNSUBSCRIBE with the same "sunsubscribe" array it
      // pushes unasked when a slot moves away, so the pipeline takes every
      // such array as a push (on_unsubscribed ignores ours: the channel is
      // gone or not confirmed). The PING's reply is the one this request
      // waits for.
      resp::encode_command(payload, {"SUNSUBSCRIBE", channel});
      resp::encode_command(payload, {"PING"});
    } else {
      resp::encode_command(payload, {"UNSUBSCRIBE", channel});
    }
    submit_detached(*route.connection, std::move(payload), {});
  }
}

void Waiters::confirmed(const std::string& channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end() || closed_) return;
  // A quorum's other nodes confirm the same channel again: only the first
  // confirmation (since the subscribe or the reconnect) wakes anyone.
  if (it->second.confirmed) return;
  it->second.confirmed = true;
  it->second.resubscribes = 0;
  // A copy: a woken waiter may finish and remove itself at once.
  for (auto& w : it->second.waiters.all()) {
    w->subscribed = true;
    w->wake();
  }
}

void Waiters::refused(const std::string& channel, const Value& reply) {
  auto it = channels_.find(channel);
  if (it == channels_.end() || closed_) return;
  // A shard channel whose slot moved (MOVED, followed by the topology), or
  // a refusal during a failover: subscribe again, where the slot is now.
  if (it->second.resubscribes < kMaxResubscribes) {
    const auto next = topology_.subscribe_refused(reply);
    if (next != topology::Topology::Refusal::fail) {
      ++it->second.resubscribes;
      if (next == topology::Topology::Refusal::retry_now) {
        subscribe(channel);
      } else {
        subscribe_later(channel, std::chrono::milliseconds(50 * it->second.resubscribes));
      }
      return;
    }
  }
  const std::string reason = reply.as_string();
  // Waiting without the channel would silently degrade to polling at the
  // holder's TTL: report the refusal instead. Each waiter removes itself;
  // unconfirmed, the channel does not linger, so the next waiter subscribes
  // again (and hears the refusal) instead of joining a dead subscription.
  it->second.confirmed = false;
  if (it->second.idle_until) {
    const std::string route_key = it->second.route_key;
    channels_.erase(it);
    unsubscribe(channel, route_key);  // other nodes of a quorum may have confirmed it
    return;
  }
  for (auto& w : it->second.waiters.all()) {
    w->fail(errc::server_error, "SUBSCRIBE to " + channel + " was refused: " + reason);
  }
}

void Waiters::subscribe_later(const std::string& channel, std::chrono::milliseconds delay) {
  auto timer = std::make_shared<asio::steady_timer>(timer_->timer.get_executor(), delay);
  timer->async_wait([this, timer, channel](std::error_code ec) {
    if (ec || closed_) return;
    auto it = channels_.find(channel);
    if (it != channels_.end() && !it->second.confirmed) subscribe(channel);
  });
}

void Waiters::on_unsubscribed(const std::string& channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end() || closed_ || !it->second.confirmed) return;
  // Messages published from now until the new subscription is confirmed
  // reach nobody: the confirmation wakes every waiter to read the state.
  it->second.confirmed = false;
  subscribe(channel);
}

void Waiters::add(const std::string& channel,
                  std::string_view route_key,
                  const std::shared_ptr<Waiter>& waiter) {
  if (closed_) return waiter->fail(errc::closed, "the client was closed");
  auto [it, inserted] = channels_.try_emplace(channel);
  it->second.waiters.push(waiter);
  it->second.idle_until.reset();
  if (inserted) {
    it->second.route_key = route_key;
    subscribe(channel);
  } else if (it->second.confirmed) {
    waiter->subscribed = true;
    waiter->wake();
  }
}

void Waiters::remove(const std::string& channel, Waiter* waiter, bool pass_signal) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  auto& queue = it->second.waiters;
  const bool unused = queue.remove(waiter);
  if (!queue.empty()) {
    if (pass_signal && unused) on_message(channel, "1");
    return;
  }
  if (closed_) {
    channels_.erase(it);
    return;
  }
  const auto linger = subscription_linger();
  // Only a confirmed subscription lingers: one still pending (or lost with
  // its connection) is dropped as before, so a later waiter's subscribe and
  // its confirmation (or refusal) are its own.
  if (linger.count() > 0 && it->second.confirmed && channels_.size() <= kMaxChannels) {
    const auto until = Clock::now() + linger;
    it->second.idle_until = until;
    if (!armed_for_ || until < *armed_for_) arm(until);
    return;
  }
  const std::string route_key = std::move(it->second.route_key);
  channels_.erase(it);
  unsubscribe(channel, route_key);
}

void Waiters::arm(Clock::time_point at) {
  armed_for_ = at;
  timer_->timer.expires_at(at);
  timer_->timer.async_wait([this, at](std::error_code ec) {
    // Cancelled (closing, or re-armed for an earlier time): the later wait
    // owns the timer now.
    if (ec || closed_ || armed_for_ != at) return;
    armed_for_.reset();
    sweep(Clock::now());
  });
}

void Waiters::sweep(Clock::time_point now) {
  std::vector<std::string> expired;
  std::optional<Clock::time_point> next;
  for (const auto& [channel, entry] : channels_) {
    if (!entry.idle_until) continue;
    if (*entry.idle_until <= now) {
      expired.push_back(channel);
    } else if (!next || *entry.idle_until < *next) {
      next = entry.idle_until;
    }
  }
  for (const auto& channel : expired) {
    auto it = channels_.find(channel);
    const std::string route_key = std::move(it->second.route_key);
    channels_.erase(it);
    unsubscribe(channel, route_key);
  }
  if (next) arm(*next);
}

void Waiters::on_message(const std::string& channel, std::string_view payload) {
  auto it = channels_.find(channel);
  if (it == channels_.end()) return;
  // Each woken waiter may remove itself (and so the channel) at once.
  for (auto& w : it->second.waiters.on_message(payload)) w->message(payload);
}

void Waiters::on_connected(bool reconnected) {
  if (!reconnected || closed_) return;
  std::vector<std::string> names;
  for (auto& [channel, entry] : channels_) {
    entry.confirmed = false;
    entry.resubscribes = 0;
    names.push_back(channel);
  }
  for (const auto& channel : names) subscribe(channel);
}

void Waiters::on_disconnected() {
  for (auto& [channel, entry] : channels_) entry.confirmed = false;
}

void Waiters::close() {
  closed_ = true;
  armed_for_.reset();
  timer_->timer.cancel();
  auto channels = std::move(channels_);
  channels_.clear();
  for (auto& [channel, entry] : channels) {
    for (auto& w : entry.waiters.all()) w->fail(errc::closed, "the client was closed");
  }
}

}  // namespace distlock::runtime
