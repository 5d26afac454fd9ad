#include "backend/sql_pool.hpp"

#include <asio/post.hpp>

#include "distlock/error.hpp"

namespace distlock::backend::sql {

std::uint64_t Pool::get(std::optional<std::chrono::steady_clock::time_point> deadline,
                        Ready ready) {
  const std::uint64_t ticket = next_ticket_++;
  if (closed_) {
    asio::post(
        io_, [ready = std::move(ready)] { ready(errc::closed, "the client was closed", nullptr); });
    return ticket;
  }
  while (!idle_.empty()) {
    auto c = std::move(idle_.front());
    idle_.pop_front();
    if (c->connection->alive()) {
      asio::post(io_, [ready = std::move(ready), c] { ready({}, {}, c); });
      return ticket;
    }
    --open_;  // dropped while idle
  }
  if (open_ < options_->max_connections) {
    open_for(std::move(ready));
    return ticket;
  }
  Waiter w{ticket, std::move(ready), nullptr};
  if (deadline) {
    w.timer = std::make_unique<asio::steady_timer>(io_, *deadline);
    w.timer->async_wait([weak = weak_from_this(), ticket](std::error_code ec) {
      auto self = weak.lock();
      if (ec || !self) return;
      for (auto it = self->waiters_.begin(); it != self->waiters_.end(); ++it) {
        if (it->ticket != ticket) continue;
        Ready r = std::move(it->ready);
        self->waiters_.erase(it);
        r(errc::timeout,
          "all " + std::to_string(self->options_->max_connections) +
              " connections of the client are in use (ClientOptions::max_connections)",
          nullptr);
        return;
      }
    });
  }
  waiters_.push_back(std::move(w));
  return ticket;
}

void Pool::withdraw(std::uint64_t ticket) {
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (it->ticket == ticket) {
      waiters_.erase(it);
      return;
    }
  }
}

void Pool::open_for(Ready ready) {
  ++open_;
  auto c = std::make_shared<Pooled>();
  c->options = options_;
  c->connection = dialect_.connect(*options_, io_);
  std::weak_ptr<Pooled> weak = c;
  c->connection->on_drop([weak](const std::string& why) {
    auto held = weak.lock();
    if (!held || !held->on_drop) return;
    auto f = std::move(held->on_drop);
    held->on_drop = nullptr;
    f(why);
  });
  c->connection->open([self = shared_from_this(), c, ready = std::move(ready)](
                          std::error_code ec, std::string message) {
    if (ec) {
      --self->open_;
      c->connection->close();
      ready(ec, std::move(message), nullptr);
      self->serve_next();  // its place is free again
      return;
    }
    if (self->closed_) {
      --self->open_;
      c->connection->close();
      return ready(errc::closed, "the client was closed", nullptr);
    }
    self->set_up(c, std::move(ready));
  });
}

// The session's idle limit: three liveness checks and their answers.
void Pool::set_up(const std::shared_ptr<Pooled>& c, Ready ready) {
  const auto limit = 3 * (options_->connection_check_interval + options_->command_timeout);
  const Statement s = dialect_.session_setup(limit);
  c->connection->query(
      s.text, s.params, [self = shared_from_this(), c, ready = std::move(ready)](const Result& r) {
        if (r.ec) {
          --self->open_;
          c->connection->close();
          ready(r.ec == errc::server_error ? errc::server_error : errc::connection_failed,
                std::string(self->dialect_.name()) +
                    ": setting up a new session failed: " + r.message,
                nullptr);
          self->serve_next();
          return;
        }
        ready({}, {}, c);
      });
}

void Pool::put(std::shared_ptr<Pooled> c) {
  c->on_drop = nullptr;
  if (closed_ || !c->connection->alive()) return discard(std::move(c));
  if (!waiters_.empty()) {
    Waiter w = std::move(waiters_.front());
    waiters_.pop_front();
    asio::post(io_, [ready = std::move(w.ready), c] { ready({}, {}, c); });
    return;
  }
  idle_.push_back(std::move(c));
}

void Pool::discard(std::shared_ptr<Pooled> c) {
  c->on_drop = nullptr;
  c->connection->close();
  --open_;
  serve_next();
}

void Pool::serve_next() {
  if (closed_ || waiters_.empty() || open_ >= options_->max_connections) return;
  Waiter w = std::move(waiters_.front());
  waiters_.pop_front();
  open_for(std::move(w.ready));
}

void Pool::close() {
  closed_ = true;
  for (auto& c : idle_) c->connection->close();
  open_ -= idle_.size();
  idle_.clear();
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& w : waiters) w.ready(errc::closed, "the client was closed", nullptr);
}

}  // namespace distlock::backend::sql
