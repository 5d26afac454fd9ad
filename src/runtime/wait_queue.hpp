// The waiters of one pub/sub channel and who a message wakes: pure logic, no
// I/O (Waiters does the subscribing), unit-tested on its own.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace distlock::runtime {

// Whom one message on a channel wakes, for the waiters that asked this way.
enum class Wake {
  one,               // one waiter (a lock was released)
  count_in_payload,  // as many as the payload's integer says (permits released)
  all,               // everyone (a latch opened, a read hold ended)
};

// Something waiting for a message on a channel.
class Waiter {
 public:
  // A message came, or the subscription was (re)confirmed: try again. May be
  // called while the waiter has an attempt in flight; it then retries as soon
  // as that attempt comes back contended.
  virtual void wake() = 0;
  // A message on its channel chose this waiter: by default, wake(). A waiter
  // whose channel is its own (a fair lock's, whose release publishes the
  // grant there) reads the payload instead of retrying.
  virtual void message(std::string_view payload) {
    (void)payload;
    wake();
  }
  // Finish with this error (the Client is closing, or the server refused the
  // subscription).
  virtual void fail(std::error_code ec, std::string message) = 0;
  // How a message wakes this waiter.
  Wake policy = Wake::one;
  // Set when a message chose this waiter and it has not acted on it yet.
  bool signaled = false;
  // True once the subscription it waits on is confirmed.
  bool subscribed = false;

 protected:
  ~Waiter() = default;
};

class WaitQueue {
 public:
  void push(std::shared_ptr<Waiter> waiter);
  // Removes `waiter`. True when a message had chosen it and it had not acted
  // on it: the caller passes that wake-up on (on_message with a payload of 1),
  // so no message is wasted on a waiter that left.
  bool remove(const Waiter* waiter);
  // A message with `payload`: marks and returns the waiters it wakes, oldest
  // first, among those not already signaled: every Wake::all waiter, the
  // first Wake::one waiter, and as many Wake::count_in_payload waiters as the
  // payload says (none for a payload that is not a positive integer). The
  // caller calls wake() on them after this returns (a woken waiter may leave
  // the queue at once).
  std::vector<std::shared_ptr<Waiter>> on_message(std::string_view payload);
  // Every waiter, oldest first.
  std::vector<std::shared_ptr<Waiter>> all() const;
  bool empty() const noexcept { return waiters_.empty(); }
  std::size_t size() const noexcept { return waiters_.size(); }

 private:
  std::deque<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace distlock::runtime
