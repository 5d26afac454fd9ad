// DetachedCall: the one Completion that owns itself. Requests nobody waits
// for on a stack (a fire-and-forget leave, a Redlock fan-out, a SUBSCRIBE, a
// background map refresh, the handshake) keep their argument strings and the
// function that takes their outcome in it, and it deletes itself.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "net/completion.hpp"

namespace distlock::net {

// Owns the strings a request views until its reply (views() views them, in
// order) and a function that gets the outcome. Started with start(), it is
// deleted exactly once: when complete() runs, before the function does (so
// the function may start another call or drop whatever sent this one), or at
// once when the request could not be queued, and then the function never
// runs. A subclass adds what one kind of sender keeps alive as well (the
// ScriptCall of Topology::call_detached).
class DetachedCall : public Completion {
 public:
  using Done = std::function<void(std::error_code, Value)>;

  // `done` may be empty: the outcome then needs no handling.
  explicit DetachedCall(Done done = {}, std::vector<std::string> strings = {});
  virtual ~DetachedCall() = default;
  DetachedCall(const DetachedCall&) = delete;
  DetachedCall& operator=(const DetachedCall&) = delete;

  std::span<const std::string_view> views() const noexcept { return views_; }

  void complete(std::error_code ec, Value reply) final;

  // Queues `call` by `submit(*call)`, which returns the error of a request
  // that was not queued (the completion then will not be called): `call` is
  // deleted here and that error returned. Otherwise `call` owns itself until
  // its completion.
  template <class Submit>
  static std::error_code start(std::unique_ptr<DetachedCall> call, Submit&& submit) {
    const std::error_code ec = submit(*call);
    if (!ec) call.release();  // owned by its completion from here on
    return ec;
  }

 private:
  Done done_;
  std::vector<std::string> strings_;
  std::vector<std::string_view> views_;
};

}  // namespace distlock::net
