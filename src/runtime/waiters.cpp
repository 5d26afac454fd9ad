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

// The outcome of a SUBSCRIBE: success goes to `on_ok`, an error reply (such
// as NOPERM for a channel the ACL user may not use) to `on_refused`. A lost
// connection is neither: the reconnect resubscribes.
net::DetachedCall::Done channel_reply(std::function<void()> on_ok,
                                      std::function<void(const std::string&)> on_refused) {
  return [on_ok = std::move(on_ok), on_refused = std::move(on_refused)](std::error_code ec,
                                                                        Value reply) {
    if (ec) return;
    if (reply.is_error()) {
      on_refused(reply.as_string());
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
  // One connection, or every node of a quorum: the first confirmation wakes
  // the waiters, and so does the first message of a release.
  for (net::Connection* connection : topology_.subscribers_for(channel)) {
    std::string payload;
    resp::encode_command(payload, {"SUBSCRIBE", channel});
    // Not queued (closing, or the queue is full): waiters fall back on their
    // TTL timers, and a reconnect resubscribes.
    submit_detached(
        *connection, std::move(payload),
        channel_reply([this, channel] { confirmed(channel); },
                      [this, channel](const std::string& why) { refused(channel, why); }));
  }
}

void Waiters::unsubscribe(const std::string& channel) {
  for (net::Connection* connection : topology_.subscribers_for(channel)) {
    std::string payload;
    resp::encode_command(payload, {"UNSUBSCRIBE", channel});
    submit_detached(*connection, std::move(payload), {});
  }
}

void Waiters::confirmed(const std::string& channel) {
  auto it = channels_.find(channel);
  if (it == channels_.end() || closed_) return;
  // A quorum's other nodes confirm the same channel again: only the first
  // confirmation (since the subscribe or the reconnect) wakes anyone.
  if (it->second.confirmed) return;
  it->second.confirmed = true;
  // A copy: a woken waiter may finish and remove itself at once.
  for (auto& w : it->second.waiters.all()) {
    w->subscribed = true;
    w->wake();
  }
}

void Waiters::refused(const std::string& channel, const std::string& reason) {
  auto it = channels_.find(channel);
  if (it == channels_.end() || closed_) return;
  // Waiting without the channel would silently degrade to polling at the
  // holder's TTL: report the refusal instead. Each waiter removes itself;
  // unconfirmed, the channel does not linger, so the next waiter subscribes
  // again (and hears the refusal) instead of joining a dead subscription.
  it->second.confirmed = false;
  if (it->second.idle_until) {
    channels_.erase(it);
    unsubscribe(channel);  // other nodes of a quorum may have confirmed it
    return;
  }
  for (auto& w : it->second.waiters.all()) {
    w->fail(errc::server_error, "SUBSCRIBE to " + channel + " was refused: " + reason);
  }
}

void Waiters::add(const std::string& channel, const std::shared_ptr<Waiter>& waiter) {
  if (closed_) return waiter->fail(errc::closed, "the client was closed");
  auto [it, inserted] = channels_.try_emplace(channel);
  it->second.waiters.push(waiter);
  it->second.idle_until.reset();
  if (inserted) {
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
  channels_.erase(it);
  unsubscribe(channel);
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
    channels_.erase(channel);
    unsubscribe(channel);
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
  for (auto& [channel, entry] : channels_) {
    entry.confirmed = false;
    subscribe(channel);
  }
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
