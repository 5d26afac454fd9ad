// The receiver of one request's outcome, and a blocking waiter for it.
#pragma once

#include <condition_variable>
#include <mutex>
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

// A Completion a blocking caller keeps on its stack and waits on. The mutex is
// held while notifying so the waiter cannot return (and destroy this object)
// before complete() has finished touching it.
class SyncCompletion final : public Completion {
 public:
  void complete(std::error_code ec, Value reply) override {
    std::lock_guard lock(mutex_);
    ec_ = ec;
    reply_ = std::move(reply);
    done_ = true;
    cv_.notify_one();
  }

  // Blocks until complete() has run; returns the reply and sets ec.
  Value wait(std::error_code& ec) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return done_; });
    ec = ec_;
    return std::move(reply_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::error_code ec_;
  Value reply_;
};

}  // namespace distlock::net
