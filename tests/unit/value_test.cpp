#include "distlock/value.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "distlock/error.hpp"

namespace distlock {

// Internal linkage: each test file may print Values its own way.
static void PrintTo(const Value& value, std::ostream* os) {
  *os << value.to_string();
}

namespace {

using namespace std::string_literals;

// The message of the protocol_error thrown by f, or a failure.
template <typename F>
std::string protocol_error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::protocol_error);
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return {};
}

TEST(Value, DefaultConstructedIsNil) {
  const Value v;
  EXPECT_TRUE(v.is_nil());
  EXPECT_EQ(v.type(), Value::Type::nil);
  EXPECT_FALSE(v.is_string() || v.is_integer() || v.is_array() || v.is_error());
}

TEST(Value, IntegerRoundTripsBothInt64EndsAndTheValuesAnInt32OrADoubleWouldChange) {
  using Limits = std::numeric_limits<std::int64_t>;
  // Both ends and their neighbours, the first values a double rounds (2^53 + 1),
  // values past 32 bits, and small ones.
  const std::int64_t values[] = {Limits::min(),
                                 Limits::min() + 1,
                                 Limits::max(),
                                 Limits::max() - 1,
                                 (1LL << 53) + 1,
                                 -(1LL << 53) - 1,
                                 (1LL << 32) + 1,
                                 (1LL << 31),
                                 -(1LL << 31) - 1,
                                 -1,
                                 0,
                                 1};
  for (const std::int64_t v : values) {
    const Value value = Value::integer(v);
    EXPECT_TRUE(value.is_integer()) << v;
    EXPECT_EQ(value.as_integer(), v);
    EXPECT_EQ(value.to_string(), std::to_string(v));
  }
}

TEST(Value, AsStringReadsSimpleBulkAndErrorReplies) {
  EXPECT_EQ(Value::simple_string("OK").as_string(), "OK");
  EXPECT_EQ(Value::bulk_string("a\0b"s).as_string(), "a\0b"s);
  EXPECT_EQ(Value::error("ERR x").as_string(), "ERR x");
  EXPECT_TRUE(Value::simple_string("OK").is_string());
  EXPECT_TRUE(Value::bulk_string("").is_string());
  EXPECT_FALSE(Value::error("ERR x").is_string()) << "an error is not a string reply";
}

TEST(Value, AsArrayGivesTheElementsAndAllowsChangingThem) {
  Value v = Value::array({Value::integer(1), Value::bulk_string("a")});
  ASSERT_EQ(v.as_array().size(), 2u);
  v.as_array().push_back(Value());
  EXPECT_EQ(v.as_array().size(), 3u);
  EXPECT_TRUE(v.as_array()[2].is_nil());
}

TEST(Value, WrongTypeAccessorThrowsProtocolErrorNamingBothTypes) {
  using testing::StartsWith;
  EXPECT_THAT(protocol_error_of([] { (void)Value::bulk_string("1").as_integer(); }),
              StartsWith("expected integer reply, got bulk string"));
  EXPECT_THAT(protocol_error_of([] { (void)Value::integer(1).as_string(); }),
              StartsWith("expected string reply, got integer"));
  EXPECT_THAT(protocol_error_of([] { (void)Value().as_array(); }),
              StartsWith("expected array reply, got nil"));
  Value error = Value::error("ERR");
  EXPECT_THAT(protocol_error_of([&] { (void)error.as_array(); }),
              StartsWith("expected array reply, got error"));
  EXPECT_THAT(protocol_error_of([] { (void)Value::array({}).as_integer(); }),
              StartsWith("expected integer reply, got array"));
}

TEST(Value, EqualityComparesTypeAndContentDeeply) {
  const auto tree = [](std::int64_t leaf) {
    return Value::array({Value::bulk_string("a"), Value::array({Value(), Value::integer(leaf)})});
  };
  EXPECT_EQ(tree(1), tree(1));
  EXPECT_NE(tree(1), tree(2)) << "a difference two levels down";
  EXPECT_NE(Value::simple_string("OK"), Value::bulk_string("OK"));
  EXPECT_NE(Value::error("x"), Value::bulk_string("x"));
  EXPECT_NE(Value(), Value::bulk_string(""));
  EXPECT_NE(Value(), Value::array({}));
  EXPECT_NE(Value::array({Value()}), Value::array({}));
  EXPECT_EQ(Value(), Value());
}

TEST(Value, ToStringRendersNestedRepliesReadably) {
  const Value v = Value::array({Value::bulk_string("a"), Value::integer(1), Value(),
                                Value::error("ERR x"), Value::simple_string("OK"),
                                Value::array({Value::integer(-2)}), Value::array({})});
  EXPECT_EQ(v.to_string(), R"(["a", 1, nil, (error) ERR x, OK, [-2], []])");
}

TEST(Value, ToStringEscapesControlBytesQuotesAndBackslashes) {
  EXPECT_EQ(Value::bulk_string("a\"b\\c\r\n\t\0\xff"s).to_string(), R"("a\"b\\c\r\n\t\x00\xff")");
}

TEST(Value, TypeNamesAreReadable) {
  EXPECT_EQ(to_string(Value::Type::nil), "nil");
  EXPECT_EQ(to_string(Value::Type::integer), "integer");
  EXPECT_EQ(to_string(Value::Type::simple_string), "simple string");
  EXPECT_EQ(to_string(Value::Type::bulk_string), "bulk string");
  EXPECT_EQ(to_string(Value::Type::error), "error");
  EXPECT_EQ(to_string(Value::Type::array), "array");
}

}  // namespace
}  // namespace distlock
