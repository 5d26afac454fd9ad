// libFuzzer target for resp::Decoder.
//
// Each input is a RESP byte stream, decoded three ways:
//   - in one feed;
//   - in two feeds, split at a point derived from the input (see split_point);
//   - for inputs of at most kMaxBytewiseInput bytes, one byte per feed.
// All three must give the same sequence of Values and fail (or not) with the
// same reason: a reply may never depend on how the socket split the bytes.
// ASan/UBSan and the decoder's own asserts catch memory and invariant errors;
// a mismatch prints both results and aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "distlock/error.hpp"
#include "distlock/value.hpp"
#include "resp/decoder.hpp"

namespace {

using distlock::Value;
using distlock::resp::Decoder;

constexpr std::size_t kMaxBytewiseInput = 256;

struct Outcome {
  std::vector<Value> values;
  bool failed = false;
  std::string error;
};

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "decoder_fuzz: %s\n", what);
  std::abort();
}

// Takes every complete reply out of decoder, stopping at the first failure.
void drain(Decoder& decoder, Outcome& out) {
  while (!out.failed) {
    std::error_code ec;
    std::optional<Value> value = decoder.next(ec);
    if (ec) {
      if (ec != distlock::make_error_code(distlock::errc::protocol_error) || value) {
        die("next() failed with a code other than protocol_error, or with a value");
      }
      out.failed = true;
      out.error = decoder.last_error();
      if (out.error.empty()) die("next() failed with an empty last_error()");
      return;
    }
    if (!value) return;
    // Rendering must work for anything the decoder produces.
    static_cast<void>(value->to_string());
    out.values.push_back(std::move(*value));
  }
}

// Once failed, a decoder stays failed, whatever is fed, until reset(); after
// reset() it decodes a fresh stream.
void check_failed_state_and_reset(Decoder& decoder) {
  std::error_code ec;
  decoder.feed("+OK\r\n", 5);
  if (decoder.next(ec) || ec != distlock::make_error_code(distlock::errc::protocol_error)) {
    die("a failed decoder did not stay failed");
  }
  decoder.reset();
  decoder.feed("+OK\r\n", 5);
  std::optional<Value> value = decoder.next(ec);
  if (ec || !value || !(*value == Value::simple_string("OK"))) die("reset() did not recover");
}

// Feeds data in pieces that end at the given offsets (the last one is size),
// draining after each feed.
Outcome decode(const char* data, const std::vector<std::size_t>& ends) {
  Decoder decoder;
  Outcome out;
  std::size_t begin = 0;
  for (const std::size_t end : ends) {
    decoder.feed(data + begin, end - begin);
    drain(decoder, out);
    begin = end;
  }
  if (out.failed) check_failed_state_and_reset(decoder);
  return out;
}

// The split point is a hash of the input rather than bytes taken from it, so
// the seed files stay plain RESP and every mutation moves the split; a crash
// file still reproduces its split exactly.
std::size_t split_point(const std::uint8_t* data, std::size_t size) {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (std::size_t i = 0; i < size; ++i) {
    hash = (hash ^ data[i]) * 1099511628211ull;
  }
  return static_cast<std::size_t>(hash % (size + 1));
}

void print(const char* label, const Outcome& outcome) {
  std::fprintf(stderr, "%s: %zu values%s%s\n", label, outcome.values.size(),
               outcome.failed ? ", then failed: " : "", outcome.error.c_str());
  for (const Value& v : outcome.values) {
    std::fprintf(stderr, "  %s\n", v.to_string().c_str());
  }
}

void expect_same(const Outcome& whole, const Outcome& other, const std::string& label) {
  if (whole.values == other.values && whole.failed == other.failed && whole.error == other.error) {
    return;
  }
  print("one feed", whole);
  print(label.c_str(), other);
  die("decoding depends on how the input was split");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  const Outcome whole = decode(bytes, {size});

  const std::size_t split = split_point(data, size);
  expect_same(whole, decode(bytes, {split, size}),
              "two feeds, split after byte " + std::to_string(split));

  if (size <= kMaxBytewiseInput) {
    std::vector<std::size_t> ends;
    for (std::size_t i = 1; i <= size; ++i) ends.push_back(i);
    expect_same(whole, decode(bytes, ends), "one byte per feed");
  }
  return 0;
}
