// Incremental RESP2 reply decoder.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <system_error>

#include "distlock/value.hpp"

struct redisReader;

namespace distlock::resp {

// Turns the bytes of a RESP2 reply stream into distlock::Values, one complete
// reply at a time, in the order the server sent them.
//
// Built on hiredis' redisReader with our own object functions, which write
// each Value straight into its place in the reply tree (no redisReply, no
// second copy). Bytes may arrive split anywhere, even one at a time; a reply
// is returned only once all of its bytes have been fed.
//
// Arrays may nest at most 8 deep (hiredis 0.14's limit); deeper nesting is a
// protocol error. Redis itself never nests replies that deep.
//
// Not thread-safe: one Decoder belongs to one connection and is used by one
// thread at a time. Not copyable or movable (hiredis keeps a pointer to it).
class Decoder {
 public:
  // At most this many bytes of internal buffer are kept while no input is
  // pending (hiredis' maxbuf). Well above one socket read, so the buffer is
  // not freed and reallocated after every read (hiredis' default of 16 KiB
  // would do that for larger reads), yet one huge reply does not pin its
  // memory for the life of the connection.
  static constexpr std::size_t kMaxIdleBuffer = 256 * 1024;

  // Throws std::bad_alloc if hiredis cannot allocate its reader.
  Decoder();
  ~Decoder();

  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // Appends size bytes received from the socket; data may be null when size
  // is 0. The bytes are copied. Does nothing while the decoder is failed. If
  // the copy cannot be allocated the decoder fails and next() reports it.
  void feed(const char* data, std::size_t size) noexcept;

  // Returns the next complete reply and clears ec, or std::nullopt with ec
  // cleared when more bytes are needed.
  //
  // On malformed input (unknown type byte, a length or integer that does not
  // parse, a bulk string not followed by CRLF, nesting too deep) or when
  // memory runs out, sets ec = errc::protocol_error, returns std::nullopt,
  // discards all buffered input, and stays failed: every later call fails the
  // same way until reset(). last_error() then describes the problem.
  //
  // A Redis error reply (`-ERR ...`) is not a failure: it is returned as a
  // Value of type error.
  std::optional<Value> next(std::error_code& ec);

  // The reason of the last failure; empty while the decoder has not failed.
  const std::string& last_error() const noexcept { return last_error_; }

  // Discards all buffered input and any partly decoded reply and clears the
  // failed state, as for a new connection. Throws std::bad_alloc if hiredis
  // cannot allocate a new reader.
  void reset();

 private:
  struct Callbacks;

  void fail(std::error_code& ec);

  redisReader* reader_ = nullptr;
  // The reply being decoded: hiredis' root object points here, so a reply
  // costs no allocation of its own.
  Value root_;
  // Set by a callback that rejects its input; read by next().
  const char* callback_error_ = nullptr;
  std::string last_error_;
};

}  // namespace distlock::resp
