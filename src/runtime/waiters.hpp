// Waiting without polling: one pub/sub subscription per lock channel per
// Client, reference-counted by the waiters on it. All on the I/O thread.
#pragma once

#include <memory>
#include <string>
#include <system_error>
#include <unordered_map>

#include "runtime/wait_queue.hpp"

namespace distlock::net {
class Connection;
}
namespace distlock::topology {
class Topology;
}

namespace distlock::runtime {

class Waiters {
 public:
  // Subscribes on topology's subscriber connections.
  explicit Waiters(topology::Topology& topology);

  // Adds `waiter` to `channel`, subscribing when it is the first one. The
  // waiter is woken once the subscription is confirmed (immediately when it
  // already is).
  void add(const std::string& channel, const std::shared_ptr<Waiter>& waiter);
  // Removes it; unsubscribes when it was the last one. A signal it had not
  // acted on passes to the next waiter, so no unlock message is wasted.
  void remove(const std::string& channel, Waiter* waiter, bool pass_signal);
  // A message on `channel`: hands it to the waiters it is for (see
  // WaitQueue), through Waiter::message (which wakes them by default).
  void on_message(const std::string& channel, std::string_view payload);
  // The pub/sub connection came (back) up: resubscribe every channel and wake
  // every waiter, since messages may have been lost while it was down.
  void on_connected(bool reconnected);
  // The pub/sub connection dropped: subscriptions are unconfirmed until the
  // resubscribe; waiters fall back on their TTL timers meanwhile.
  void on_disconnected();
  // Aborts every waiter (Client closing).
  void close();
  std::size_t channel_count() const noexcept { return channels_.size(); }

 private:
  struct Channel {
    WaitQueue waiters;
    bool confirmed = false;
  };
  void subscribe(const std::string& channel);
  void confirmed(const std::string& channel);
  void refused(const std::string& channel, const std::string& reason);

  topology::Topology& topology_;
  std::unordered_map<std::string, Channel> channels_;
  bool closed_ = false;
};

}  // namespace distlock::runtime
