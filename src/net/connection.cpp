// Connection: the lifecycle of one Redis connection. Connecting through the
// transport, the handshake, dropping and reconnecting with backoff, close(),
// and moving bytes between the transport and the request pipeline.
#include "net/connection.hpp"

#include <openssl/rand.h>

#include <asio/post.hpp>
#include <future>

#include "distlock/error.hpp"
#include "net/backoff.hpp"
#include "net/connection_handshake.hpp"
#include "net/detached_call.hpp"

namespace distlock::net {
namespace {

std::uint64_t random_u64() {
  std::uint64_t r = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&r), sizeof r) != 1) {
    r = static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  }
  return r;
}

// Finishes a connect attempt exactly once, whichever of the operations, the
// connect timer or a drop gets there first.
struct Attempt {
  std::function<void(std::error_code, std::string)> done;
  bool finished = false;

  void finish(std::error_code ec, std::string message) {
    if (finished) return;
    finished = true;
    auto d = std::move(done);
    d(ec, std::move(message));
  }
};

}  // namespace

Connection::Connection(asio::io_context& io,
                       const ClientOptions& options,
                       asio::ssl::context* tls,
                       Role role,
                       Handlers handlers)
    : io_(io),
      options_(options),
      handlers_(std::move(handlers)),
      address_{options.host, options.port},
      pipeline_({role == Role::subscriber, std::move(handlers_.on_push),
                 std::move(handlers_.on_readonly)}),
      transport_(io, options_, tls),
      request_timer_(io),
      connect_timer_(io),
      reconnect_timer_(io) {}

Connection::~Connection() = default;

void Connection::connect(std::error_code& ec, std::string& message) {
  std::promise<std::pair<std::error_code, std::string>> result;
  asio::post(io_, [self = shared_from_this(), &result] {
    self->start_connect([self, &result](std::error_code e, std::string m) {
      if (!e) self->became_ready(false);
      result.set_value({e, std::move(m)});
    });
  });
  started_ = true;
  auto [e, m] = result.get_future().get();
  ec = e;
  message = std::move(m);
  if (ec == errc::connection_lost || ec == errc::timeout) {
    ec = errc::connection_failed;  // the first connect never got going
  }
  if (ec) close();
}

void Connection::start() {
  if (started_.exchange(true)) return;
  asio::post(io_, [self = shared_from_this()] {
    if (self->state_ != State::disconnected) return;
    self->ever_connected_ = true;  // from here on, failures reconnect
    self->start_connect([self](std::error_code ec, std::string) {
      if (!ec) return self->became_ready(false);
      if (self->state_ == State::connecting) {
        self->state_ = State::disconnected;
        self->transport_.close();
        self->schedule_reconnect();
        if (self->handlers_.on_connect_failed) self->handlers_.on_connect_failed();
      }
    });
  });
}

void Connection::start_connect(ConnectDone done) {
  if (state_ == State::closed) return done(errc::closed, "client closed");
  state_ = State::connecting;
  const auto gen = ++generation_;
  auto attempt = std::make_shared<Attempt>();
  attempt->done = std::move(done);
  {
    std::lock_guard lock(mutex_);
    attempted_ = address_;
  }

  connect_timer_.expires_after(options_.connect_timeout);
  connect_timer_.async_wait([self = shared_from_this(), attempt, gen](std::error_code e) {
    if (e || gen != self->generation_ || attempt->finished) return;
    self->transport_.close();
    attempt->finish(errc::connection_failed,
                    "connect timed out after " +
                        std::to_string(self->options_.connect_timeout.count()) + " ms");
  });

  transport_.async_connect(
      attempted_, [self = shared_from_this(), attempt, gen](std::error_code e, std::string m) {
        if (gen != self->generation_ || attempt->finished) return;
        if (e) return attempt->finish(e, std::move(m));
        self->send_handshake([attempt](std::error_code ec, std::string message) {
          attempt->finish(ec, std::move(message));
        });
      });
}

void Connection::send_handshake(ConnectDone done) {
  decoder_.reset();
  read_some();
  ConnectionHandshake handshake(options_, handlers_.preload);
  ConnectionPipeline::Request r;
  r.payload = handshake.take_payload();
  r.replies = handshake.replies();
  auto attempt = std::make_shared<Attempt>();
  attempt->done = std::move(done);
  // Finishes the attempt with the outcome of the handshake's replies.
  r.completion = new DetachedCall(
      [attempt, handshake = std::move(handshake)](std::error_code ec, Value reply) {
        if (ec) return attempt->finish(ec, "connection lost during handshake");
        std::string message;
        ec = handshake.check(std::move(reply), message);
        attempt->finish(ec, std::move(message));
      });
  // Ahead of the requests that queued meanwhile, which wait for it; the
  // connect timer bounds the handshake, so no deadline of its own.
  write_buffer_ = pipeline_.prepend(std::move(r));
  start_write();
}

void Connection::became_ready(bool reconnected) {
  if (state_ == State::closed) return;
  state_ = State::ready;
  ever_connected_ = true;
  reconnect_attempt_ = 0;
  connect_timer_.cancel();
  if (handlers_.on_connected) handlers_.on_connected(reconnected);
  arm_timer();
  write_some();
}

void Connection::drop(std::error_code ec) {
  (void)ec;
  if (state_ == State::closed || state_ == State::disconnected) return;
  const bool was_ready = state_ == State::ready;
  state_ = State::disconnected;
  ++generation_;
  transport_.close();
  writing_ = false;
  write_buffer_.clear();
  decoder_.reset();
  // Requests already written may have run; they are never re-sent. Requests
  // queued before the drop fail too, so "everything pending when the
  // connection went away" has one outcome; those submitted after this point
  // wait for the reconnect.
  pipeline_.fail_all(errc::connection_lost);
  if (was_ready && handlers_.on_disconnected) handlers_.on_disconnected();
  schedule_reconnect();
}

void Connection::schedule_reconnect() {
  if (state_ == State::closed || !ever_connected_) return;
  const auto delay = backoff_delay(options_.reconnect_min_delay, options_.reconnect_max_delay,
                                   reconnect_attempt_++, random_u64());
  reconnect_timer_.expires_after(delay);
  reconnect_timer_.async_wait([self = shared_from_this()](std::error_code e) {
    if (e || self->state_ != State::disconnected) return;
    self->start_connect([self](std::error_code ec, std::string) {
      if (ec) {
        // A failure found by drop() itself has already rescheduled.
        if (self->state_ == State::connecting) self->drop(ec);
        if (self->handlers_.on_connect_failed) self->handlers_.on_connect_failed();
        return;
      }
      self->became_ready(true);
    });
  });
}

void Connection::follow_address() {
  // Not started yet (the first connect reads the address), or closed.
  if (state_ == State::closed || !ever_connected_ || !options_.unix_path.empty()) return;
  {
    std::lock_guard lock(mutex_);
    if (address_.host == attempted_.host && address_.port == attempted_.port) return;
  }
  // The old address is the wrong node, not a busy one: reconnect after the
  // shortest backoff step. Up or connecting there: a drop like any other
  // (in-flight requests complete with connection_lost), which schedules it.
  // Waiting for a longer backoff: re-arming the timer cancels that wait.
  reconnect_attempt_ = 0;
  if (state_ != State::disconnected) return drop(errc::connection_lost);
  schedule_reconnect();
}

void Connection::close() {
  if (!pipeline_.close_intake()) return;
  asio::post(io_, [self = shared_from_this()] {
    self->state_ = State::closed;
    ++self->generation_;
    self->request_timer_.cancel();
    self->connect_timer_.cancel();
    self->reconnect_timer_.cancel();
    self->transport_.close();
    self->pipeline_.fail_all(errc::closed);
  });
}

std::error_code Connection::submit(std::string payload,
                                   std::uint32_t replies,
                                   Completion* completion) {
  return submit(std::move(payload), replies, completion, Clock::now());
}

std::error_code Connection::submit(std::string payload,
                                   std::uint32_t replies,
                                   Completion* completion,
                                   Clock::time_point since) {
  bool wake = false;
  const auto ec = pipeline_.submit(
      {std::move(payload), replies, completion, since + options_.command_timeout, {}},
      options_.max_queued, wake);
  if (wake) asio::post(io_, [self = shared_from_this()] { self->flush(); });
  return ec;
}

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
  pipeline_.take_submitted();
  if (state_ == State::closed) return pipeline_.fail_all(errc::closed);
  arm_timer();
  write_some();
}

void Connection::write_some() {
  if (writing_ || state_ != State::ready) return;
  pipeline_.take_writes(write_buffer_);
  if (!write_buffer_.empty()) start_write();
}

void Connection::start_write() {
  writing_ = true;
  const auto gen = generation_;
  transport_.async_write(write_buffer_,
                         [self = shared_from_this(), gen](std::error_code e, std::size_t) {
                           if (gen != self->generation_) return;
                           self->writing_ = false;
                           self->write_buffer_.clear();
                           if (e) return self->drop(e);
                           self->write_some();  // nothing while the handshake runs
                         });
}

void Connection::read_some() {
  const auto gen = generation_;
  transport_.async_read_some([self = shared_from_this(), gen](std::error_code e, std::size_t n) {
    if (gen != self->generation_) return;
    if (e) return self->drop(e);
    self->decoder_.feed(self->transport_.read_data(), n);
    for (;;) {
      std::error_code pe;
      auto reply = self->decoder_.next(pe);
      if (pe) return self->drop(pe);
      if (!reply) break;
      self->on_reply(std::move(*reply));
      if (gen != self->generation_) return;  // a completion closed or dropped us
    }
    self->read_some();
  });
}

void Connection::on_reply(Value reply) {
  if (pipeline_.on_reply(std::move(reply)) == ConnectionPipeline::Match::unexpected) {
    drop(errc::protocol_error);  // a reply nobody asked for
  }
}

void Connection::arm_timer() {
  if (timer_armed_ || state_ == State::closed) return;
  const auto earliest = pipeline_.next_deadline();
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
  pipeline_.expire(Clock::now());
  arm_timer();
}

}  // namespace distlock::net
