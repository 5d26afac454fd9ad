/// \file
/// A Redis reply, as decoded from RESP2.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace distlock {

/// One reply from Redis: nil, integer, simple string, bulk string, error or an
/// array of replies. A Value owns its data; copying copies it.
///
/// The typed accessors (as_integer, as_string, as_array) throw distlock::Error
/// with errc::protocol_error when the Value holds another type, so a reply of
/// an unexpected shape never reads garbage.
class Value {
 public:
  /// The RESP type of a reply.
  enum class Type : std::uint8_t { nil, integer, simple_string, bulk_string, error, array };

  /// A nil reply.
  Value() = default;

  ///@{
  /// A reply of that type holding the argument.
  static Value integer(std::int64_t v);
  static Value simple_string(std::string s);
  static Value bulk_string(std::string s);
  static Value error(std::string message);
  static Value array(std::vector<Value> elements);
  ///@}

  /// Which type of reply this is.
  Type type() const noexcept { return type_; }
  ///@{
  /// True when type() is that type.
  bool is_nil() const noexcept { return type_ == Type::nil; }
  bool is_integer() const noexcept { return type_ == Type::integer; }
  bool is_error() const noexcept { return type_ == Type::error; }
  bool is_array() const noexcept { return type_ == Type::array; }
  ///@}
  /// True for simple and bulk strings (not for errors).
  bool is_string() const noexcept {
    return type_ == Type::simple_string || type_ == Type::bulk_string;
  }

  /// The value of an integer reply.
  std::int64_t as_integer() const;
  /// The text of a simple string, bulk string or error reply.
  const std::string& as_string() const;
  ///@{
  /// The elements of an array reply.
  const std::vector<Value>& as_array() const;
  std::vector<Value>& as_array();
  ///@}

  /// A readable rendering for logs and test failures, e.g. `["a", 1, nil]`.
  std::string to_string() const;

  friend bool operator==(const Value& a, const Value& b) noexcept;

 private:
  static Value of_string(Type type, std::string s);

  Type type_ = Type::nil;
  std::int64_t integer_ = 0;
  std::string string_;
  std::vector<Value> array_;
};

/// Name of a Value::Type: "nil", "integer", "simple string", ...
std::string_view to_string(Value::Type t) noexcept;

}  // namespace distlock
