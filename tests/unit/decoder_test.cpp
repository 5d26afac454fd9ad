#include "resp/decoder.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "distlock/error.hpp"

namespace distlock {

// Internal linkage: each test file may print Values its own way.
static void PrintTo(const Value& value, std::ostream* os) {
  *os << value.to_string();
}

namespace resp {
namespace {

using namespace std::string_literals;

struct Case {
  std::string name;
  std::string bytes;
  Value expected;
};

Value bulk(std::string s) {
  return Value::bulk_string(std::move(s));
}
Value arr(std::vector<Value> v) {
  return Value::array(std::move(v));
}

// One case per reply type and edge; all of them back to back form the stream
// the split tests cut up.
std::vector<Case> every_reply_type() {
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  return {
      {"simple string", "+OK\r\n", Value::simple_string("OK")},
      {"empty simple string", "+\r\n", Value::simple_string("")},
      {"error", "-ERR unknown command 'x'\r\n", Value::error("ERR unknown command 'x'")},
      {"integer", ":42\r\n", Value::integer(42)},
      {"zero", ":0\r\n", Value::integer(0)},
      {"negative integer", ":-7\r\n", Value::integer(-7)},
      {"int64 min", ":-9223372036854775808\r\n", Value::integer(min)},
      {"int64 max", ":9223372036854775807\r\n", Value::integer(max)},
      {"bulk string", "$5\r\nhello\r\n", bulk("hello")},
      {"empty bulk string", "$0\r\n\r\n", bulk("")},
      {"binary bulk string", "$8\r\na\0b\r\nc\r\n\r\n"s, bulk("a\0b\r\nc\r\n"s)},
      {"bulk string of CRLFs", "$4\r\n\r\n\r\n\r\n", bulk("\r\n\r\n")},
      {"nil bulk string", "$-1\r\n", Value()},
      {"nil array", "*-1\r\n", Value()},
      {"empty array", "*0\r\n", arr({})},
      {"flat array", "*3\r\n$1\r\na\r\n:1\r\n$-1\r\n",
       arr({bulk("a"), Value::integer(1), Value()})},
      {"nested arrays 3 deep with mixed types",
       "*4\r\n*3\r\n+a\r\n*2\r\n:-1\r\n$0\r\n\r\n*0\r\n-E x\r\n*-1\r\n$2\r\nzz\r\n",
       arr({arr({Value::simple_string("a"), arr({Value::integer(-1), bulk("")}), arr({})}),
            Value::error("E x"), Value(), bulk("zz")})},
      {"array ending in a nested array", "*2\r\n:1\r\n*1\r\n*1\r\n:2\r\n",
       arr({Value::integer(1), arr({arr({Value::integer(2)})})})},
  };
}

std::string concatenated(const std::vector<Case>& cases) {
  std::string all;
  for (const Case& c : cases) all += c.bytes;
  return all;
}

std::vector<Value> expected_values(const std::vector<Case>& cases) {
  std::vector<Value> values;
  for (const Case& c : cases) values.push_back(c.expected);
  return values;
}

// Appends every reply that is complete now; fails the test on an error.
void drain(Decoder& decoder, std::vector<Value>& out) {
  std::error_code ec;
  while (auto value = decoder.next(ec)) out.push_back(std::move(*value));
  ASSERT_FALSE(ec) << decoder.last_error();
}

std::vector<Value> decode_in_pieces(std::string_view bytes, std::size_t piece) {
  Decoder decoder;
  std::vector<Value> out;
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    const std::string_view part = bytes.substr(at, piece);
    decoder.feed(part.data(), part.size());
    drain(decoder, out);
  }
  return out;
}

std::error_code decode_error(std::string_view bytes, std::string* message = nullptr) {
  Decoder decoder;
  decoder.feed(bytes.data(), bytes.size());
  std::error_code ec;
  while (decoder.next(ec)) {
  }
  if (message != nullptr) *message = decoder.last_error();
  return ec;
}

TEST(Decoder, DecodesEveryReplyTypeFedWhole) {
  for (const Case& c : every_reply_type()) {
    const std::vector<Value> got = decode_in_pieces(c.bytes, c.bytes.size());
    ASSERT_EQ(got.size(), 1u) << c.name;
    EXPECT_EQ(got[0], c.expected) << c.name << ": got " << got[0].to_string();
  }
}

TEST(Decoder, DecodesEveryReplyTypeSplitAtEveryByteBoundary) {
  const std::vector<Case> cases = every_reply_type();
  const std::string all = concatenated(cases);
  const std::vector<Value> expected = expected_values(cases);
  for (std::size_t split = 0; split <= all.size(); ++split) {
    Decoder decoder;
    std::vector<Value> got;
    decoder.feed(all.data(), split);
    drain(decoder, got);
    decoder.feed(all.data() + split, all.size() - split);
    drain(decoder, got);
    ASSERT_EQ(got, expected) << "split at byte " << split;
  }
}

TEST(Decoder, DecodesEveryReplyTypeFedOneByteAtATime) {
  const std::vector<Case> cases = every_reply_type();
  EXPECT_EQ(decode_in_pieces(concatenated(cases), 1), expected_values(cases));
}

TEST(Decoder, ReturnsNothingUntilTheLastByteOfAReplyArrives) {
  const std::string bytes = "*2\r\n$3\r\nabc\r\n:1\r\n";
  Decoder decoder;
  std::error_code ec;
  for (std::size_t i = 0; i + 1 < bytes.size(); ++i) {
    decoder.feed(&bytes[i], 1);
    EXPECT_FALSE(decoder.next(ec).has_value()) << "after byte " << i;
    EXPECT_FALSE(ec);
  }
  decoder.feed(&bytes.back(), 1);
  EXPECT_TRUE(decoder.next(ec).has_value());
}

TEST(Decoder, DecodesManyRepliesBackToBackInOrder) {
  std::string bytes;
  std::vector<Value> expected;
  for (int i = 0; i < 10000; ++i) {
    bytes += ":" + std::to_string(i) + "\r\n$" + std::to_string(std::to_string(i).size()) + "\r\n" +
             std::to_string(i) + "\r\n";
    expected.push_back(Value::integer(i));
    expected.push_back(bulk(std::to_string(i)));
  }
  EXPECT_EQ(decode_in_pieces(bytes, bytes.size()), expected);
  EXPECT_EQ(decode_in_pieces(bytes, 4093), expected) << "pieces not aligned with replies";
}

TEST(Decoder, DecodesAOneMebibyteBinaryBulkStringWholeAndInPieces) {
  std::string payload(1 << 20, '\0');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 131 % 256);
  const std::string bytes = "$" + std::to_string(payload.size()) + "\r\n" + payload + "\r\n+OK\r\n";
  const std::vector<Value> expected = {bulk(payload), Value::simple_string("OK")};
  EXPECT_EQ(decode_in_pieces(bytes, bytes.size()), expected);
  EXPECT_EQ(decode_in_pieces(bytes, 16 * 1024 + 7), expected);
}

TEST(Decoder, DecodesALargeArrayThatGrowsPastItsInitialReservation) {
  std::string bytes = "*100000\r\n";
  std::vector<Value> elements;
  for (int i = 0; i < 100000; ++i) {
    bytes += ":" + std::to_string(i) + "\r\n";
    elements.push_back(Value::integer(i));
  }
  EXPECT_EQ(decode_in_pieces(bytes, 1000), std::vector<Value>{arr(std::move(elements))});
}

TEST(Decoder, RejectsMalformedInputWithProtocolError) {
  const std::vector<std::string> garbage = {
      "?x\r\n",                                                        // unknown type byte
      "x\r\n",                                                         // inline command text
      "$abc\r\n",                                                      // bulk length not a number
      "$-2\r\n",                                                       // bulk length below -1
      "$+3\r\nabc\r\n",                                                // bulk length with a sign
      "$3\r\nabcXY",                                                   // bulk not followed by CRLF
      ":12a\r\n",                                                      // integer with trailing junk
      ":\r\n",                                                         // empty integer
      ":9223372036854775808\r\n",                                      // integer overflow
      "*abc\r\n",                                                      // array length not a number
      "*-2\r\n",                                                       // array length below -1
      "*3000000000\r\n",                                               // array length out of range
      "*2\r\n:1\r\n?\r\n",                                             // garbage inside an array
      "*2\r\n*2\r\n$1\r\na\r\n$x\r\n",                                 // garbage in a nested array
      "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",  // nested 9 deep
  };
  for (const std::string& bytes : garbage) {
    std::string message;
    const std::error_code ec = decode_error(bytes, &message);
    EXPECT_EQ(ec, errc::protocol_error) << testing::PrintToString(bytes);
    EXPECT_FALSE(message.empty()) << testing::PrintToString(bytes);
  }
}

TEST(Decoder, NamesTheProblemInLastError) {
  std::string message;
  decode_error("$3\r\nabcXY", &message);
  EXPECT_NE(message.find("not followed by CRLF"), std::string::npos) << message;
  decode_error("?x\r\n", &message);
  EXPECT_NE(message.find("\"?\""), std::string::npos) << message;
}

TEST(Decoder, StaysFailedUntilResetAndThenDecodesAgain) {
  Decoder decoder;
  std::error_code ec;
  decoder.feed("*2\r\n:1\r\n?x\r\n", 12);
  EXPECT_FALSE(decoder.next(ec).has_value());
  EXPECT_EQ(ec, errc::protocol_error);
  decoder.feed("+OK\r\n", 5);
  EXPECT_FALSE(decoder.next(ec).has_value()) << "a failed decoder must not resync by itself";
  EXPECT_EQ(ec, errc::protocol_error);

  decoder.reset();
  EXPECT_TRUE(decoder.last_error().empty());
  decoder.feed("+OK\r\n", 5);
  const std::optional<Value> value = decoder.next(ec);
  EXPECT_FALSE(ec);
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(*value, Value::simple_string("OK"));
}

TEST(Decoder, ResetDiscardsAPartlyDecodedReply) {
  Decoder decoder;
  std::error_code ec;
  decoder.feed("*3\r\n*2\r\n:1\r\n", 12);
  EXPECT_FALSE(decoder.next(ec).has_value());
  decoder.reset();
  decoder.feed(":5\r\n", 4);
  EXPECT_EQ(decoder.next(ec), std::optional<Value>(Value::integer(5)));
  EXPECT_FALSE(ec);
}

TEST(Decoder, DestroyingWithAPartlyDecodedReplyReleasesIt) {
  // Checked by LeakSanitizer in the sanitizer build.
  Decoder decoder;
  std::error_code ec;
  const std::string bytes = "*3\r\n*2\r\n$5\r\nhello\r\n*1\r\n";
  decoder.feed(bytes.data(), bytes.size());
  EXPECT_FALSE(decoder.next(ec).has_value());
  EXPECT_FALSE(ec);
}

TEST(Decoder, FeedingNothingIsHarmless) {
  Decoder decoder;
  decoder.feed(nullptr, 0);
  std::error_code ec;
  EXPECT_FALSE(decoder.next(ec).has_value());
  EXPECT_FALSE(ec);
}

// Random corruptions of a valid stream must end in values or protocol_error,
// never in a crash, a hang or a leak (run under ASan/LSan).
TEST(Decoder, SurvivesRandomlyCorruptedInput) {
  const std::string valid = concatenated(every_reply_type());
  std::mt19937 random(12345);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = valid;
    for (int flips = 1 + round % 4; flips > 0; --flips) {
      bytes[random() % bytes.size()] = static_cast<char>(random() % 256);
    }
    Decoder decoder;
    std::error_code ec;
    for (std::size_t at = 0; at < bytes.size() && !ec; at += 1 + round % 7) {
      decoder.feed(bytes.data() + at, std::min<std::size_t>(1 + round % 7, bytes.size() - at));
      while (decoder.next(ec)) {
      }
    }
    if (ec) {
      EXPECT_EQ(ec, errc::protocol_error);
    }
  }
}

}  // namespace
}  // namespace resp
}  // namespace distlock
