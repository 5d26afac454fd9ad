// Connection, part two: the request pipeline. Queueing submitted requests,
// coalescing them into one write, matching replies to requests in FIFO order,
// request timeouts, and failing everything pending. The transport (sockets,
// TLS, the handshake, reconnecting, the socket reads and writes) is in
// connection.cpp.
#include "net/connection.hpp"

#include <asio/post.hpp>
#include <utility>
#include <vector>

#include "distlock/error.hpp"

namespace distlock::net {
namespace {

bool is_push(const Value& v) {
  if (!v.is_array()) return false;
  const auto& a = v.as_array();
  if (a.empty() || !a[0].is_string()) return false;
  const auto& kind = a[0].as_string();
  return (kind == "message" && a.size() == 3) || (kind == "pmessage" && a.size() == 4);
}

bool is_readonly(const Value& v) {
  return v.is_error() && v.as_string().rfind("READONLY", 0) == 0;
}

}  // namespace

std::error_code Connection::submit(std::string payload,
                                   std::uint32_t replies,
                                   Completion* completion) {
  bool post = false;
  {
    std::lock_guard lock(mutex_);
    if (closing_) return errc::closed;
    if (outstanding_.load(std::memory_order_relaxed) >= options_.max_queued) {
      return errc::queue_full;
    }
    ++outstanding_;
    submitted_.push_back(Request{
        std::move(payload), replies, completion, Clock::now() + options_.command_timeout, {}});
    post = !flush_posted_;
    flush_posted_ = true;
  }
  if (post) asio::post(io_, [self = shared_from_this()] { self->flush(); });
  return {};
}

// The address, like the queue, is shared with other threads; following a
// change is the transport's part (follow_address, in connection.cpp).
void Connection::retarget(std::string host, std::uint16_t port) {
  set_address(std::move(host), port);
  asio::post(io_, [self = shared_from_this()] { self->follow_address(); });
}

void Connection::set_address(std::string host, std::uint16_t port) {
  std::lock_guard lock(mutex_);
  address_ = {std::move(host), port};
}

ClientOptions::Endpoint Connection::address() const {
  std::lock_guard lock(mutex_);
  return address_;
}

void Connection::flush() {
  std::vector<Request> batch;
  {
    std::lock_guard lock(mutex_);
    batch.swap(submitted_);
    flush_posted_ = false;
  }
  if (state_ == State::closed) {
    for (auto& r : batch) finish(r, errc::closed, {});
    return;
  }
  for (auto& r : batch) unsent_.push_back(std::move(r));
  arm_timer();
  write_some();
}

void Connection::write_some() {
  if (writing_ || state_ != State::ready) return;
  while (!unsent_.empty()) {
    Request& r = unsent_.front();
    if (r.completion != nullptr) {
      write_buffer_.append(r.payload);
      r.payload = std::string();
      inflight_.push_back(std::move(r));
    } else {
      --outstanding_;  // timed out before it was sent: never send it
    }
    unsent_.pop_front();
  }
  if (!write_buffer_.empty()) start_write();
}

void Connection::on_reply(Value reply) {
  if (role_ == Role::subscriber && is_push(reply)) {
    if (handlers_.on_push) handlers_.on_push(std::move(reply));
    return;
  }
  if (inflight_.empty()) return drop(errc::protocol_error);  // a reply nobody asked for
  Request& front = inflight_.front();
  if (front.replies > 1) {
    front.collected.push_back(std::move(reply));
    if (front.collected.size() < front.replies) return;
    reply = Value::array(std::move(front.collected));
  }
  Request done = std::move(front);
  inflight_.pop_front();
  if (handlers_.on_readonly && done.replies == 1 && is_readonly(reply)) {
    // A replica refused the write: it did not run. Reported like a drop, so
    // callers take the paths they already have for an unanswered request;
    // the handler first, so the search for the master is under way by then.
    handlers_.on_readonly();
    return finish(done, errc::connection_lost, {});
  }
  finish(done, {}, std::move(reply));
}

void Connection::finish(Request& r, std::error_code ec, Value reply) {
  --outstanding_;
  if (Completion* c = std::exchange(r.completion, nullptr)) c->complete(ec, std::move(reply));
}

void Connection::arm_timer() {
  if (timer_armed_ || state_ == State::closed) return;
  auto earliest = Clock::time_point::max();
  for (const auto& r : inflight_) {
    if (r.completion != nullptr && r.deadline < earliest) earliest = r.deadline;
  }
  for (const auto& r : unsent_) {
    if (r.completion != nullptr && r.deadline < earliest) earliest = r.deadline;
  }
  if (earliest == Clock::time_point::max()) return;
  timer_armed_ = true;
  request_timer_.expires_at(earliest);
  request_timer_.async_wait([self = shared_from_this()](std::error_code e) {
    self->timer_armed_ = false;
    if (e || self->state_ == State::closed) return;
    self->on_timer();
  });
}

void Connection::on_timer() {
  const auto now = Clock::now();
  // In-flight requests stay queued (their replies will still come, in order)
  // but complete now; the late reply is discarded.
  for (auto& r : inflight_) {
    if (r.completion != nullptr && r.deadline <= now) {
      std::exchange(r.completion, nullptr)->complete(errc::timeout, {});
    }
  }
  for (auto it = unsent_.begin(); it != unsent_.end();) {
    if (it->completion != nullptr && it->deadline <= now) {
      finish(*it, errc::timeout, {});
      it = unsent_.erase(it);
    } else {
      ++it;
    }
  }
  arm_timer();
}

void Connection::fail_all(std::error_code ec) {
  std::vector<Request> batch;
  {
    std::lock_guard lock(mutex_);
    batch.swap(submitted_);
  }
  auto drain = [&](auto& queue) {
    for (auto& r : queue) finish(r, ec, {});
    queue.clear();
  };
  drain(inflight_);
  drain(unsent_);
  drain(batch);
}

}  // namespace distlock::net
