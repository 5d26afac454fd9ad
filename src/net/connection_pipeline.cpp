#include "net/connection_pipeline.hpp"

#include <utility>

#include "distlock/error.hpp"

namespace distlock::net {
namespace {

bool is_push(const Value& v) {
  if (!v.is_array()) return false;
  const auto& a = v.as_array();
  if (a.empty() || !a[0].is_string()) return false;
  const auto& kind = a[0].as_string();
  // "smessage": a sharded message. "sunsubscribe": the server ends a
  // sharded subscription when its slot moves away, unasked, in the same
  // shape as its answer to SUNSUBSCRIBE; every one is taken as a push, so
  // whoever sends SUNSUBSCRIBE makes a request of a following PING.
  return ((kind == "message" || kind == "smessage" || kind == "sunsubscribe") && a.size() == 3) ||
         (kind == "pmessage" && a.size() == 4);
}

bool is_readonly(const Value& v) {
  return v.is_error() && v.as_string().rfind("READONLY", 0) == 0;
}

}  // namespace

ConnectionPipeline::ConnectionPipeline(Hooks hooks) : hooks_(std::move(hooks)) {}

std::error_code ConnectionPipeline::submit(Request r, std::size_t max_queued, bool& wake) {
  std::lock_guard lock(mutex_);
  wake = false;
  if (closed_) return errc::closed;
  if (outstanding_.load(std::memory_order_relaxed) >= max_queued) return errc::queue_full;
  ++outstanding_;
  submitted_.push_back(std::move(r));
  wake = !wake_pending_;
  wake_pending_ = true;
  return {};
}

bool ConnectionPipeline::close_intake() {
  std::lock_guard lock(mutex_);
  return !std::exchange(closed_, true);
}

void ConnectionPipeline::take_submitted() {
  std::vector<Request> batch;
  {
    std::lock_guard lock(mutex_);
    batch.swap(submitted_);
    wake_pending_ = false;
  }
  for (auto& r : batch) unsent_.push_back(std::move(r));
}

std::string ConnectionPipeline::prepend(Request r) {
  ++outstanding_;
  std::string payload = std::exchange(r.payload, std::string());
  inflight_.push_front(std::move(r));
  return payload;
}

void ConnectionPipeline::take_writes(std::string& out) {
  while (!unsent_.empty()) {
    Request& r = unsent_.front();
    if (r.completion != nullptr) {
      out.append(r.payload);
      r.payload = std::string();
      inflight_.push_back(std::move(r));
    } else {
      --outstanding_;  // timed out before it was sent: never send it
    }
    unsent_.pop_front();
  }
}

ConnectionPipeline::Match ConnectionPipeline::on_reply(Value reply) {
  if (hooks_.take_pushes && is_push(reply)) {
    if (hooks_.on_push) hooks_.on_push(std::move(reply));
    return Match::push;
  }
  if (inflight_.empty()) return Match::unexpected;
  Request& front = inflight_.front();
  if (front.replies > 1) {
    front.collected.push_back(std::move(reply));
    if (front.collected.size() < front.replies) return Match::request;
    reply = Value::array(std::move(front.collected));
  }
  // Off the queue before its completion runs, which may re-enter the
  // connection.
  Request done = std::move(front);
  inflight_.pop_front();
  if (hooks_.on_readonly && done.replies == 1 && is_readonly(reply)) {
    // Reported like a drop, so callers take the paths they already have for
    // an unanswered request; the hook first, so the search for the master is
    // under way by then.
    hooks_.on_readonly();
    finish(done, errc::connection_lost, {});
    return Match::request;
  }
  finish(done, {}, std::move(reply));
  return Match::request;
}

void ConnectionPipeline::expire(Clock::time_point now) {
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
}

Clock::time_point ConnectionPipeline::next_deadline() const {
  auto earliest = Clock::time_point::max();
  for (const auto& r : inflight_) {
    if (r.completion != nullptr && r.deadline < earliest) earliest = r.deadline;
  }
  for (const auto& r : unsent_) {
    if (r.completion != nullptr && r.deadline < earliest) earliest = r.deadline;
  }
  return earliest;
}

void ConnectionPipeline::fail_all(std::error_code ec) {
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

void ConnectionPipeline::finish(Request& r, std::error_code ec, Value reply) {
  --outstanding_;
  if (Completion* c = std::exchange(r.completion, nullptr)) c->complete(ec, std::move(reply));
}

}  // namespace distlock::net
