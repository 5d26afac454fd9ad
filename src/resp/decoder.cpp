#include "resp/decoder.hpp"

#include <hiredis/read.h>

#include <algorithm>
#include <cassert>
#include <new>
#include <utility>
#include <vector>

#include "distlock/error.hpp"

namespace distlock::resp {

// hiredis calls these while it parses. Ownership rules of hiredis 0.14 read.c
// that this relies on:
//  - Every object is created exactly once, children in index order; a bulk
//    string only once its payload and the two bytes after it are buffered.
//  - `*-1` (nil array) arrives as createNil, like `$-1`.
//  - A NULL return makes hiredis fail the reader ("Out of memory"); it never
//    calls a creator again until the reader is replaced.
//  - freeObject is only ever called on the root object (on error, in
//    redisReaderFree, and never on children), so children must be owned by
//    their parent. Here every child lives inside its parent's vector and the
//    root lives in Decoder::root_, so freeObject clears root_ in place.
// The callbacks never let an exception escape into C code.
struct Decoder::Callbacks {
  static redisReplyObjectFunctions functions;

  static Decoder& owner(const redisReadTask* task) noexcept {
    return *static_cast<Decoder*>(task->privdata);
  }

  static void* reject(const redisReadTask* task, const char* reason) noexcept {
    owner(task).callback_error_ = reason;
    return nullptr;
  }

  // Moves v to where it belongs: the root slot, or the next element of the
  // parent array. A vector only grows once its previous element is complete,
  // and an element's own children go into its own vector, so the arrays still
  // being filled (task->obj of the open tasks) never move.
  static Value* place(const redisReadTask* task, Value&& v) {
    if (task->parent == nullptr) {
      Value& root = owner(task).root_;
      root = std::move(v);
      return &root;
    }
    std::vector<Value>& siblings = static_cast<Value*>(task->parent->obj)->as_array();
    assert(static_cast<std::size_t>(task->idx) == siblings.size());
    siblings.push_back(std::move(v));
    return &siblings.back();
  }

  static void* create_string(const redisReadTask* task, char* str, std::size_t len) noexcept {
    // hiredis skips the two bytes after a bulk payload without looking at
    // them; if they are not CRLF the stream is out of step and every later
    // reply would be garbage. (For status and error lines they always are.)
    if (str[len] != '\r' || str[len + 1] != '\n') {
      return reject(task, "bulk string not followed by CRLF");
    }
    try {
      std::string text(str, len);
      switch (task->type) {
        case REDIS_REPLY_STATUS:
          return place(task, Value::simple_string(std::move(text)));
        case REDIS_REPLY_ERROR:
          return place(task, Value::error(std::move(text)));
        default:
          return place(task, Value::bulk_string(std::move(text)));
      }
    } catch (...) {
      return reject(task, "out of memory decoding a string reply");
    }
  }

  static void* create_array(const redisReadTask* task, int size) noexcept {
    if (size < 0) return reject(task, "negative multi-bulk length");
    try {
      // Reserve no more than a bounded amount up front: the count comes from
      // the wire, and `*2000000000\r\n` must not allocate (and touch) 150 GB
      // before a single element has arrived. Larger arrays grow as elements
      // arrive, so memory stays proportional to the bytes received.
      constexpr std::size_t kMaxReserve = 4096;
      std::vector<Value> elements;
      elements.reserve(std::min(static_cast<std::size_t>(size), kMaxReserve));
      return place(task, Value::array(std::move(elements)));
    } catch (...) {
      return reject(task, "out of memory decoding an array reply");
    }
  }

  static void* create_integer(const redisReadTask* task, long long v) noexcept {
    try {
      return place(task, Value::integer(v));
    } catch (...) {
      return reject(task, "out of memory decoding an integer reply");
    }
  }

  // Both `$-1` and `*-1` arrive here; both decode as nil.
  static void* create_nil(const redisReadTask* task) noexcept {
    try {
      return place(task, Value());
    } catch (...) {
      return reject(task, "out of memory decoding a nil reply");
    }
  }

  static void free_object(void* root) noexcept { *static_cast<Value*>(root) = Value(); }

  static redisReader* create_reader(Decoder* owner) {
    redisReader* reader = redisReaderCreateWithFunctions(&functions);
    if (reader == nullptr) throw std::bad_alloc();
    reader->maxbuf = kMaxIdleBuffer;
    // Copied into every task's privdata. (redisReaderSetPrivdata casts the
    // pointer to int, which does not compile as C++.)
    reader->privdata = owner;
    return reader;
  }
};

redisReplyObjectFunctions Decoder::Callbacks::functions = {
    &Decoder::Callbacks::create_string, &Decoder::Callbacks::create_array,
    &Decoder::Callbacks::create_integer, &Decoder::Callbacks::create_nil,
    &Decoder::Callbacks::free_object};

Decoder::Decoder() : reader_(Callbacks::create_reader(this)) {}

// redisReaderFree hands a partly decoded reply to free_object, which clears
// root_; root_ is destroyed only after this body.
Decoder::~Decoder() {
  redisReaderFree(reader_);
}

void Decoder::feed(const char* data, std::size_t size) noexcept {
  if (size == 0) return;
  // A failure here (already failed, or out of memory copying) leaves the
  // reader's error set; next() reports it.
  redisReaderFeed(reader_, data, size);
}

std::optional<Value> Decoder::next(std::error_code& ec) {
  ec.clear();
  void* reply = nullptr;
  if (redisReaderGetReply(reader_, &reply) != REDIS_OK) {
    fail(ec);
    return std::nullopt;
  }
  if (reply == nullptr) return std::nullopt;
  assert(reply == &root_);
  return std::optional<Value>(std::move(root_));
}

void Decoder::reset() {
  redisReader* fresh = Callbacks::create_reader(this);
  redisReaderFree(reader_);
  reader_ = fresh;
  root_ = Value();
  callback_error_ = nullptr;
  last_error_.clear();
}

void Decoder::fail(std::error_code& ec) {
  ec = make_error_code(errc::protocol_error);
  if (!last_error_.empty()) return;
  // Our own reason first: when a callback rejects its input hiredis only
  // knows it as "Out of memory".
  last_error_ = "cannot decode reply: ";
  last_error_ += callback_error_ != nullptr ? callback_error_ : reader_->errstr;
}

}  // namespace distlock::resp
