// The request pipeline of one connection: queue, reply matching, deadlines.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "distlock/value.hpp"
#include "net/completion.hpp"

namespace distlock::net {

using Clock = std::chrono::steady_clock;

// Holds a connection's requests from submit() to their outcome: an intake any
// thread submits to, the requests not yet written, and the requests written
// and waiting for their replies, which the server answers in FIFO order.
//
// It does no I/O and reads no clock. The connection writes what take_writes()
// returns, feeds every decoded reply to on_reply(), passes the time to
// expire(), and reports a lost or closed connection with fail_all().
//
// Outcomes: each request's Completion runs exactly once, inside on_reply(),
// expire() or fail_all(), with its reply (an error reply too, with ec clear;
// an array of the replies for a request expecting several), errc::timeout, or
// the error passed to fail_all(). A request that timed out while in flight
// stays in the queue, so the reply still on its way is discarded, not taken
// for the next request's.
//
// Thread safety: submit(), close_intake() and outstanding() from any thread;
// every other member on the connection's I/O thread only.
class ConnectionPipeline {
 public:
  struct Request {
    std::string payload;  // RESP-encoded commands; emptied once written
    std::uint32_t replies = 1;
    Completion* completion = nullptr;  // null once completed early (timeout)
    Clock::time_point deadline = Clock::time_point::max();
    std::vector<Value> collected;  // for requests expecting several replies
  };

  struct Hooks {
    // Subscriber role: RESP2 pub/sub pushes ("message", "pmessage",
    // "smessage", "sunsubscribe") go to on_push (dropped when it is empty)
    // instead of answering a request.
    bool take_pushes = false;
    std::function<void(Value push)> on_push;
    // When set, a READONLY error reply to a single-reply request runs this,
    // then completes the request with errc::connection_lost: a replica
    // refused the write, so it did not run.
    std::function<void()> on_readonly;
  };

  // What on_reply() did with a reply.
  enum class Match {
    request,     // it answered (or was part of the answer to) a request
    push,        // a pub/sub push, handed to on_push
    unexpected,  // no request waits for a reply: the stream is out of step
  };

  explicit ConnectionPipeline(Hooks hooks);
  ConnectionPipeline(const ConnectionPipeline&) = delete;
  ConnectionPipeline& operator=(const ConnectionPipeline&) = delete;

  // Thread-safe. Queues r in the intake. Fails with errc::closed after
  // close_intake(), or errc::queue_full when max_queued requests are
  // outstanding; the completion is then never called. Sets `wake` when the
  // I/O thread must be told to take_submitted(): for the first request since
  // it last did.
  std::error_code submit(Request r, std::size_t max_queued, bool& wake);

  // Thread-safe. Every later submit() fails with errc::closed. Returns false
  // when the intake was closed already.
  bool close_intake();

  // Thread-safe. Requests accepted and not yet done with: completed requests
  // do not count, except one that timed out in flight, until its late reply
  // comes or the connection drops.
  std::size_t outstanding() const noexcept { return outstanding_.load(); }

  // Moves the intake to the end of the queue of unsent requests.
  void take_submitted();

  // Puts r ahead of every request in flight, as written already, and returns
  // its payload: the caller writes it before anything else (the handshake on
  // a new connection, while unsent requests wait).
  std::string prepend(Request r);

  // Appends the payloads of every unsent request to `out`, in order, as one
  // write, and moves the requests in flight. A request that completed before
  // being written (timed out) is dropped here, never sent.
  void take_writes(std::string& out);

  // Matches one reply, in the order the server sent them.
  Match on_reply(Value reply);

  // Completes with errc::timeout every request whose deadline is at or
  // before `now`; unsent ones leave the queue.
  void expire(Clock::time_point now);

  // The earliest deadline of a request not completed yet, or
  // Clock::time_point::max() when there is none.
  Clock::time_point next_deadline() const;

  // Completes every request, in flight, unsent and submitted, in that order,
  // with ec and empties the pipeline (a lost connection: written requests
  // may have run and are never re-sent; or a close).
  void fail_all(std::error_code ec);

 private:
  void finish(Request& r, std::error_code ec, Value reply);

  const Hooks hooks_;
  std::atomic<std::size_t> outstanding_{0};

  // Shared with submitting threads.
  std::mutex mutex_;
  std::vector<Request> submitted_;
  bool wake_pending_ = false;
  bool closed_ = false;

  // I/O thread only.
  std::deque<Request> unsent_;
  std::deque<Request> inflight_;
};

}  // namespace distlock::net
