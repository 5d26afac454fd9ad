// Connection, part one: the transport. Resolving and connecting (TCP, TLS,
// unix sockets), the handshake (AUTH, SELECT, CLIENT SETNAME, script preload),
// dropping and reconnecting with backoff, close(), and the socket reads and
// writes. The request pipeline is in connection_pipeline.cpp.
#include "net/connection.hpp"

#include <openssl/rand.h>
#include <openssl/ssl.h>

#include <asio/connect.hpp>
#include <asio/post.hpp>
#include <asio/ssl/host_name_verification.hpp>
#include <asio/write.hpp>
#include <future>

#include "distlock/error.hpp"
#include "net/backoff.hpp"
#include "resp/encoder.hpp"

namespace distlock::net {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

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

// Checks the replies to AUTH / SELECT / CLIENT SETNAME sent after connecting.
class HandshakeCompletion final : public Completion {
 public:
  HandshakeCompletion(std::shared_ptr<Attempt> attempt, std::vector<std::string> steps)
      : attempt_(std::move(attempt)), steps_(std::move(steps)) {}

  void complete(std::error_code ec, Value reply) override {
    std::unique_ptr<HandshakeCompletion> self(this);
    if (ec) return attempt_->finish(ec, "connection lost during handshake");
    std::vector<Value> replies;
    if (steps_.size() == 1) {
      replies.push_back(std::move(reply));
    } else {
      replies = std::move(reply.as_array());
    }
    for (std::size_t i = 0; i < replies.size() && i < steps_.size(); ++i) {
      if (!replies[i].is_error() || steps_[i].empty()) continue;  // "" = optional step
      const bool auth = steps_[i].rfind("AUTH", 0) == 0;
      // The server's error text never echoes the password; steps_ holds only
      // a description such as "AUTH user 'alice'".
      return attempt_->finish(auth ? errc::auth_failed : errc::connection_failed,
                              steps_[i] + " failed: " + replies[i].as_string());
    }
    attempt_->finish({}, {});
  }

 private:
  std::shared_ptr<Attempt> attempt_;
  std::vector<std::string> steps_;
};

}  // namespace

Connection::Connection(asio::io_context& io,
                       const ClientOptions& options,
                       asio::ssl::context* tls,
                       Role role,
                       Handlers handlers)
    : io_(io),
      options_(options),
      tls_context_(tls),
      role_(role),
      handlers_(std::move(handlers)),
      address_{options.host, options.port},
      resolver_(io),
      request_timer_(io),
      connect_timer_(io),
      reconnect_timer_(io),
      read_buffer_(kReadChunk) {}

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
        self->close_socket();
        self->schedule_reconnect();
        if (self->handlers_.on_connect_failed) self->handlers_.on_connect_failed();
      }
    });
  });
}

void Connection::start_connect(std::function<void(std::error_code, std::string)> done) {
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
    self->close_socket();
    self->resolver_.cancel();
    attempt->finish(errc::connection_failed,
                    "connect timed out after " +
                        std::to_string(self->options_.connect_timeout.count()) + " ms");
  });

  auto fail = [attempt](const char* what, std::error_code e) {
    attempt->finish(errc::connection_failed, std::string(what) + ": " + e.message());
  };
  auto on_connected = [self = shared_from_this(), attempt, gen, fail](std::error_code e) {
    if (gen != self->generation_ || attempt->finished) return;
    if (e) return fail("connect failed", e);
    self->on_transport_ready(
        [attempt](std::error_code ec, std::string m) { attempt->finish(ec, std::move(m)); });
  };

  if (!options_.unix_path.empty()) {
    unix_ = std::make_unique<asio::local::stream_protocol::socket>(io_);
    unix_->async_connect(asio::local::stream_protocol::endpoint(options_.unix_path), on_connected);
    return;
  }
  resolver_.async_resolve(
      attempted_.host, std::to_string(attempted_.port),
      [self = shared_from_this(), attempt, gen, fail, on_connected](
          std::error_code e, asio::ip::tcp::resolver::results_type results) {
        if (gen != self->generation_ || attempt->finished) return;
        if (e) return fail("cannot resolve host", e);
        asio::ip::tcp::socket* socket = nullptr;
        if (self->tls_context_ != nullptr) {
          self->tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket>>(
              self->io_, *self->tls_context_);
          socket = &self->tls_->next_layer();
        } else {
          self->tcp_ = std::make_unique<asio::ip::tcp::socket>(self->io_);
          socket = self->tcp_.get();
        }
        asio::async_connect(*socket, results,
                            [on_connected](std::error_code ec, const asio::ip::tcp::endpoint&) {
                              on_connected(ec);
                            });
      });
}

void Connection::on_transport_ready(std::function<void(std::error_code, std::string)> done) {
  asio::ip::tcp::socket* socket = tls_ ? &tls_->next_layer() : tcp_.get();
  if (socket != nullptr) {
    std::error_code ignored;
    socket->set_option(asio::ip::tcp::no_delay(true), ignored);
    socket->set_option(asio::socket_base::keep_alive(true), ignored);
  }
  if (!tls_) return send_handshake(std::move(done));

  const std::string& name =
      options_.tls.server_name.empty() ? attempted_.host : options_.tls.server_name;
  // SSL_set_tlsext_host_name is a macro with a C cast; call what it expands to.
  SSL_ctrl(tls_->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
           const_cast<char*>(name.c_str()));
  if (options_.tls.verify_peer) {
    tls_->set_verify_mode(asio::ssl::verify_peer);
    tls_->set_verify_callback(asio::ssl::host_name_verification(name));
  } else {
    tls_->set_verify_mode(asio::ssl::verify_none);
  }
  const auto gen = generation_;
  tls_->async_handshake(
      asio::ssl::stream_base::client,
      [self = shared_from_this(), gen, done = std::move(done)](std::error_code e) mutable {
        if (gen != self->generation_) return;
        if (e) return done(errc::connection_failed, "TLS handshake failed: " + e.message());
        self->send_handshake(std::move(done));
      });
}

void Connection::send_handshake(std::function<void(std::error_code, std::string)> done) {
  decoder_.reset();
  read_some();
  std::vector<std::string> steps;
  std::string payload;
  if (!options_.password.empty()) {
    if (options_.username.empty()) {
      const std::string_view args[] = {"AUTH", options_.password};
      resp::encode_command(payload, args);
      steps.push_back("AUTH");
    } else {
      const std::string_view args[] = {"AUTH", options_.username, options_.password};
      resp::encode_command(payload, args);
      steps.push_back("AUTH user '" + options_.username + "'");
    }
  }
  if (options_.db != 0) {
    const std::string db = std::to_string(options_.db);
    const std::string_view args[] = {"SELECT", db};
    resp::encode_command(payload, args);
    steps.push_back("SELECT " + db);
  }
  if (!options_.client_name.empty()) {
    const std::string_view args[] = {"CLIENT", "SETNAME", options_.client_name};
    resp::encode_command(payload, args);
    steps.push_back("CLIENT SETNAME");
  }
  if (steps.empty()) {
    // Always make one round trip, so a server that speaks another protocol
    // (TLS on a plain client) fails the connect instead of the first command.
    const std::string_view args[] = {"PING"};
    resp::encode_command(payload, args);
    steps.push_back("PING");
  }
  for (const auto& command : handlers_.preload) {
    const std::vector<std::string_view> args(command.begin(), command.end());
    resp::encode_command(payload, args);
    steps.emplace_back();  // optional: its error (e.g. NOPERM) is ignored
  }

  auto attempt = std::make_shared<Attempt>();
  attempt->done = std::move(done);
  Request r;
  r.replies = static_cast<std::uint32_t>(steps.size());
  r.completion = new HandshakeCompletion(attempt, std::move(steps));
  r.deadline = Clock::time_point::max();  // the connect timer bounds the handshake
  ++outstanding_;
  write_buffer_ = std::move(payload);
  inflight_.push_front(std::move(r));
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
  close_socket();
  writing_ = false;
  write_buffer_.clear();
  decoder_.reset();
  // Requests already written may have run; they are never re-sent. Requests
  // queued before the drop fail too, so "everything pending when the
  // connection went away" has one outcome; those submitted after this point
  // wait for the reconnect.
  fail_all(errc::connection_lost);
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

void Connection::start_write() {
  writing_ = true;
  const auto gen = generation_;
  with_stream([&](auto& stream) {
    asio::async_write(stream, asio::buffer(write_buffer_),
                      [self = shared_from_this(), gen](std::error_code e, std::size_t) {
                        if (gen != self->generation_) return;
                        self->writing_ = false;
                        self->write_buffer_.clear();
                        if (e) return self->drop(e);
                        self->write_some();  // nothing while the handshake runs
                      });
  });
}

void Connection::read_some() {
  const auto gen = generation_;
  with_stream([&](auto& stream) {
    stream.async_read_some(asio::buffer(read_buffer_),
                           [self = shared_from_this(), gen](std::error_code e, std::size_t n) {
                             if (gen != self->generation_) return;
                             if (e) return self->drop(e);
                             self->decoder_.feed(self->read_buffer_.data(), n);
                             for (;;) {
                               std::error_code pe;
                               auto reply = self->decoder_.next(pe);
                               if (pe) return self->drop(pe);
                               if (!reply) break;
                               self->on_reply(std::move(*reply));
                               if (gen != self->generation_)
                                 return;  // a completion closed or dropped us
                             }
                             self->read_some();
                           });
  });
}

void Connection::close() {
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
    closing_ = true;
  }
  asio::post(io_, [self = shared_from_this()] {
    self->state_ = State::closed;
    ++self->generation_;
    self->request_timer_.cancel();
    self->connect_timer_.cancel();
    self->reconnect_timer_.cancel();
    self->resolver_.cancel();
    self->close_socket();
    self->fail_all(errc::closed);
  });
}

void Connection::close_socket() {
  std::error_code ignored;
  if (tls_) tls_->next_layer().close(ignored);
  if (tcp_) tcp_->close(ignored);
  if (unix_) unix_->close(ignored);
}

template <class F>
void Connection::with_stream(F&& f) {
  if (tls_) {
    f(*tls_);
  } else if (unix_) {
    f(*unix_);
  } else {
    f(*tcp_);
  }
}

}  // namespace distlock::net
