// Waiting without polling: one pub/sub subscription per lock channel per
// Client, reference-counted by the waiters on it. All on the I/O thread.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <system_error>
#include <unordered_map>

namespace distlock::net {
class Connection;
}

namespace distlock::detail {

class ClientImpl;

// Something waiting for a lock's unlock message.
class Waiter {
 public:
  // An unlock was published, or the subscription was (re)confirmed: retry.
  // May be called while the waiter has an attempt in flight; it then retries
  // as soon as that attempt comes back contended.
  virtual void wake() = 0;
  // Finish with this error (the Client is closing, or the server refused the
  // subscription).
  virtual void fail(std::error_code ec, std::string message) = 0;
  // Set when this waiter was chosen for an unlock message it has not acted on.
  bool signaled = false;
  // True once the subscription it waits on is confirmed.
  bool subscribed = false;

 protected:
  ~Waiter() = default;
};

class Waiters {
 public:
  explicit Waiters(ClientImpl& client);

  // Adds `waiter` to `channel`, subscribing when it is the first one. The
  // waiter is woken once the subscription is confirmed (immediately when it
  // already is).
  void add(const std::string& channel, const std::shared_ptr<Waiter>& waiter);
  // Removes it; unsubscribes when it was the last one. A signal it had not
  // acted on passes to the next waiter, so no unlock message is wasted.
  void remove(const std::string& channel, Waiter* waiter, bool pass_signal);
  // An unlock message on `channel`: wake the first waiter not yet signaled.
  void on_message(const std::string& channel);
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
    std::deque<std::shared_ptr<Waiter>> waiters;
    bool confirmed = false;
  };
  void subscribe(const std::string& channel);
  void confirmed(const std::string& channel);
  void refused(const std::string& channel, const std::string& reason);
  net::Connection& connection(const std::string& channel);

  ClientImpl& client_;
  std::unordered_map<std::string, Channel> channels_;
  bool closed_ = false;
};

}  // namespace distlock::detail
