// Waiting without polling: one pub/sub subscription per lock channel per
// Client, reference-counted by the waiters on it. All on the I/O thread.
//
// A channel whose last waiter left stays subscribed for a while (it
// lingers): a thread that waits on the same channel round after round (a
// fair lock's waiter on its own channel, a contended Lock's waiters) joins a
// confirmed subscription and pays no SUBSCRIBE round trip per wait. A timer
// on the I/O thread unsubscribes it once it has been idle that long.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "runtime/wait_queue.hpp"

namespace asio {
class io_context;
}
namespace distlock {
class Value;
}
namespace distlock::net {
class Connection;
}
namespace distlock::topology {
class Topology;
}

namespace distlock::runtime {

// How long a channel stays subscribed after its last waiter left:
// Waiters::kLinger unless changed. An internal hook, not public API: tests
// set it far beyond their bounds (so only a lingering subscription explains
// what they see) or short (to see it dropped). Process-wide; it applies to
// channels that become idle after the change. 0 unsubscribes at once.
std::chrono::milliseconds subscription_linger() noexcept;
// `linger` >= 0.
void set_subscription_linger(std::chrono::milliseconds linger) noexcept;

class Waiters {
 public:
  using Clock = std::chrono::steady_clock;
  // The default linger: long enough to span the rounds of a busy waiter,
  // short enough that a name nobody waits on any more costs the server a
  // subscription for seconds, not for the Client's life.
  static constexpr std::chrono::milliseconds kLinger{2000};
  // While the Client has more channels than this, one whose last waiter left
  // is unsubscribed at once (a process waiting on many distinct names keeps
  // no unbounded set of idle subscriptions).
  static constexpr std::size_t kMaxChannels = 1024;

  // Subscribes on topology's subscriber connections; the linger timer runs
  // on `io` (the I/O thread).
  Waiters(topology::Topology& topology, asio::io_context& io);
  ~Waiters();
  Waiters(const Waiters&) = delete;
  Waiters& operator=(const Waiters&) = delete;

  // Adds `waiter` to `channel`, a channel of the primitive whose calls are
  // routed by `route_key` (which picks the shard under sharded pub/sub),
  // subscribing when nobody waits on it and it is not lingering. The waiter is woken once the
  // subscription is confirmed (immediately when it already is, lingering or not: a message that
  // came while nobody waited was dropped, so the waiter reads the state again).
  void add(const std::string& channel,
           std::string_view route_key,
           const std::shared_ptr<Waiter>& waiter);
  // Removes it. When it was the last one, the channel lingers (confirmed
  // subscriptions only, and while the Client has at most kMaxChannels), or
  // is unsubscribed at once. A signal it had not acted on passes to the next
  // waiter, so no unlock message is wasted.
  void remove(const std::string& channel, Waiter* waiter, bool pass_signal);
  // A message on `channel`: hands it to the waiters it is for (see
  // WaitQueue), through Waiter::message (which wakes them by default). On a
  // lingering channel nobody waits: the message is dropped.
  void on_message(const std::string& channel, std::string_view payload);
  // The server ended a sharded subscription of ours (the "sunsubscribe"
  // push when its slot moved to another master): a confirmed channel is
  // subscribed again where its slot lives now, and its waiters read the
  // state again once that is confirmed. For a channel not confirmed it is
  // the late answer to our own SUNSUBSCRIBE (or a subscribe that is still
  // on its way): nothing to do.
  void on_unsubscribed(const std::string& channel);
  // A pub/sub connection came (back) up: resubscribe every channel (the
  // lingering ones too) and wake every waiter, since messages may have been
  // lost while it was down. Also run when the routes changed (a Cluster's
  // slots moved under sharded pub/sub).
  void on_connected(bool reconnected);
  // The pub/sub connection dropped: subscriptions are unconfirmed until the
  // resubscribe; waiters fall back on their TTL timers meanwhile.
  void on_disconnected();
  // Aborts every waiter (Client closing) and stops the linger timer.
  void close();
  // Subscribed channels, lingering ones included.
  std::size_t channel_count() const noexcept { return channels_.size(); }

 private:
  struct Channel {
    WaitQueue waiters;
    std::string route_key;
    bool confirmed = false;
    // Subscribes refused with a redirection or a transient error since the
    // last confirmation (bounded: kMaxResubscribes).
    // Set while nobody waits on it: when it is unsubscribed.
    std::optional<Clock::time_point> idle_until;
    unsigned resubscribes = 0;
  };
  struct LingerTimer;
  // Refusals a channel follows (MOVED, TRYAGAIN, CLUSTERDOWN...) before the
  // next one is reported to its waiters as a refusal.
  static constexpr unsigned kMaxResubscribes = 20;

  void subscribe(const std::string& channel);
  void unsubscribe(const std::string& channel, std::string_view route_key);
  void confirmed(const std::string& channel);
  void refused(const std::string& channel, const Value& reply);
  void subscribe_later(const std::string& channel, std::chrono::milliseconds delay);
  // Unsubscribes the channels whose linger is over; re-arms for the next.
  void sweep(Clock::time_point now);
  void arm(Clock::time_point at);

  topology::Topology& topology_;
  std::unordered_map<std::string, Channel> channels_;
  std::unique_ptr<LingerTimer> timer_;
  std::optional<Clock::time_point> armed_for_;  // the timer's expiry while armed
  bool closed_ = false;
};

}  // namespace distlock::runtime
