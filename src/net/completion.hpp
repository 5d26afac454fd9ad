// The receiver of one request's outcome, and a blocking waiter for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <system_error>

#include "distlock/value.hpp"

namespace distlock::net {

// Receives the outcome of one request exactly once, on the I/O thread.
// `reply` is the server's reply (an error reply is a Value of type error, with
// ec clear); for a request that expects several replies it is an array of
// them. On failure ec is set and reply is nil.
class Completion {
 public:
  virtual void complete(std::error_code ec, Value reply) = 0;

 protected:
  ~Completion() = default;
};

// A one-shot event one thread waits on and another sets once, built on a
// futex. set() makes no access to the object after its release store (the
// wake is a syscall on the address only), so the waiter may destroy the
// event as soon as wait() returns: the pattern glibc's own mutex unlock
// relies on. Unlike a mutex and condition variable, the woken thread never
// blocks again on a lock the setter still holds.
class Event {
 public:
  void set() noexcept;
  void wait() noexcept;

 private:
  std::atomic<std::uint32_t> state_{0};
};

// A Completion a blocking caller keeps on its stack and waits on.
class SyncCompletion final : public Completion {
 public:
  void complete(std::error_code ec, Value reply) override {
    ec_ = ec;
    reply_ = std::move(reply);
    event_.set();
  }

  // Blocks until complete() has run; returns the reply and sets ec.
  Value wait(std::error_code& ec) {
    event_.wait();
    ec = ec_;
    return std::move(reply_);
  }

 private:
  Event event_;
  std::error_code ec_;
  Value reply_;
};

}  // namespace distlock::net
