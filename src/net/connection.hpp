// One Redis connection on Asio, pipelined and shared by every thread: the
// lifecycle (connect, handshake, drop, reconnect, close) over a transport
// (the byte stream) and a pipeline (requests, replies, deadlines).
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/ssl/context.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/steady_timer.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distlock/client_options.hpp"
#include "net/completion.hpp"
#include "net/connection_pipeline.hpp"
#include "net/connection_transport.hpp"
#include "resp/decoder.hpp"

namespace distlock::net {

// Auto-pipelining: submit() may be called from any thread. Requests queue
// under a short mutex (never held across I/O); the I/O thread coalesces all
// queued requests into one write and matches replies to requests in FIFO
// order.
//
// Failure semantics:
//  - A request that gets no reply within ClientOptions::command_timeout
//    completes with errc::timeout; the connection stays up and discards the
//    late reply when it comes.
//  - When the connection drops, every request already written completes with
//    errc::connection_lost (it may or may not have run; it is never re-sent).
//    Requests not yet written wait for the reconnect, within their timeout.
//  - The connection then reconnects with capped, jittered exponential backoff
//    until close().
//  - Its address (options.host/port at first) can change: retarget() moves
//    the connection to another node (Sentinel follows a failover this way);
//    a move drops the current connection exactly as above.
//
// A Connection in subscriber role hands RESP2 pub/sub pushes ("message",
// "pmessage", "smessage", "sunsubscribe") to the push handler instead of
// matching them to requests.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  enum class Role { data, subscriber };

  struct Handlers {
    // After every successful (re)connect and handshake; `reconnected` is false
    // for the first one. On the I/O thread.
    std::function<void(bool reconnected)> on_connected;
    // After the connection dropped (not after close()). On the I/O thread.
    std::function<void()> on_disconnected;
    // After a background connect or reconnect attempt failed (start(), or a
    // reconnect after a drop); the next attempt follows with backoff. On the
    // I/O thread. Cluster uses it to look for a node's replacement.
    std::function<void()> on_connect_failed;
    // Pub/sub pushes (subscriber role). On the I/O thread.
    std::function<void(Value push)> on_push;
    // Commands appended to every handshake whose replies, errors included,
    // are ignored: SCRIPT LOAD of the scripts, so callers after a (re)connect
    // do not all meet NOSCRIPT and each send the full script text.
    std::vector<std::vector<std::string>> preload;
    // Optional (Sentinel). When set, a READONLY error reply (the node is a
    // replica now: a demoted master) to a single-reply request completes
    // that request with errc::connection_lost instead of the error reply,
    // right after this runs, on the I/O thread. A READONLY write did not run; its
    // callers treat connection_lost as "no answer" already: an acquire is
    // undone and fails (never re-sent), a release is repeated in the
    // background, a renewal changes nothing until the next one.
    std::function<void()> on_readonly;
  };

  Connection(asio::io_context& io,
             const ClientOptions& options,
             asio::ssl::context* tls,
             Role role,
             Handlers handlers);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Makes the first connection; blocks the calling thread (which must not be
  // the I/O thread) for at most connect_timeout. Fails with
  // connection_failed, auth_failed, timeout or closed. After a failure the
  // Connection is closed.
  void connect(std::error_code& ec, std::string& message);

  // Starts connecting in the background (idempotent): requests queue until
  // the connection is ready, and failures retry with backoff until close().
  // For connections made on first use, such as the pub/sub one.
  void start();

  // Queues `payload` (already RESP-encoded; it produces `replies` replies).
  // Thread-safe. On success the completion runs exactly once, later, on the
  // I/O thread. Fails at once, without calling the completion, with closed or
  // queue_full.
  std::error_code submit(std::string payload, std::uint32_t replies, Completion* completion);
  // As above, its command_timeout counted from `since` instead of now (a
  // call that waited in the coalescer before it was sent).
  std::error_code submit(std::string payload,
                         std::uint32_t replies,
                         Completion* completion,
                         Clock::time_point since);

  // Moves the connection to host:port. Thread-safe; returns at once. Every
  // later connect attempt goes there. When the address differs from the one
  // of the current or last attempt and the connection has been started
  // (connect() succeeded, or start()): if it is up or connecting, it drops
  // now (requests in flight complete with errc::connection_lost, as on any
  // drop: never re-sent) and reconnects after the shortest backoff step
  // (reconnect_min_delay); if it waits to reconnect, that wait is cut to
  // the same step. The reconnect then runs on_connected(true). Before
  // the connection is started it only sets the address. No effect after
  // close(), or for a unix_path connection.
  void retarget(std::string host, std::uint16_t port);
  // Sets the address of the next connect attempt only: a connection that is
  // up stays up, and a pending reconnect keeps its backoff (an address set
  // in on_connect_failed is where the next attempt goes). Thread-safe.
  void set_address(std::string host, std::uint16_t port);
  // The address set last (options.host/port until retarget or set_address).
  // Thread-safe.
  ClientOptions::Endpoint address() const;

  // Completes every queued and in-flight request with errc::closed and closes
  // the socket. Thread-safe, idempotent; returns at once (the socket closes on
  // the I/O thread).
  void close();

  bool connected() const noexcept { return state_.load() == State::ready; }
  std::size_t outstanding() const noexcept { return pipeline_.outstanding(); }
  const ClientOptions& options() const noexcept { return options_; }

 private:
  enum class State { disconnected, connecting, ready, closed };
  using ConnectDone = std::function<void(std::error_code, std::string)>;

  // All below run on the I/O thread.
  void start_connect(ConnectDone done);
  void send_handshake(ConnectDone done);
  void became_ready(bool reconnected);
  void drop(std::error_code ec);
  void schedule_reconnect();
  // retarget(): reconnects when the address changed.
  void follow_address();
  // Takes the requests submitted since the last flush into the pipeline.
  void flush();
  void write_some();
  // Writes write_buffer_ (not empty, no write in progress).
  void start_write();
  void read_some();
  void on_reply(Value reply);
  void arm_timer();
  void on_timer();

  asio::io_context& io_;
  const ClientOptions options_;
  Handlers handlers_;

  std::atomic<State> state_{State::disconnected};

  // Shared with submitting threads (the pipeline's intake is thread-safe too).
  mutable std::mutex mutex_;
  ClientOptions::Endpoint address_;  // where the next connect attempt goes
  ConnectionPipeline pipeline_;

  // I/O thread only.
  ClientOptions::Endpoint attempted_;  // the address of the current or last attempt
  ConnectionTransport transport_;
  asio::steady_timer request_timer_;
  asio::steady_timer connect_timer_;
  asio::steady_timer reconnect_timer_;
  bool timer_armed_ = false;
  std::string write_buffer_;
  bool writing_ = false;
  resp::Decoder decoder_;
  unsigned reconnect_attempt_ = 0;
  bool ever_connected_ = false;
  std::atomic<bool> started_{false};
  std::uint64_t generation_ = 0;  // bumps on every drop; stale handlers ignore themselves
};

}  // namespace distlock::net
