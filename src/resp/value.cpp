#include "distlock/value.hpp"

#include <cstdio>
#include <utility>

#include "distlock/error.hpp"

namespace distlock {
namespace {

[[noreturn]] void throw_wrong_type(std::string_view expected, Value::Type got) {
  std::string message = "expected ";
  message.append(expected).append(" reply, got ").append(to_string(got));
  throw Error(errc::protocol_error, message);
}

// Escapes bytes that would make a log line ambiguous or unreadable (quotes,
// backslashes, CR/LF, other control and non-ASCII bytes) as C-style escapes.
void append_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte >= 0x7f) {
          char hex[5];
          std::snprintf(hex, sizeof hex, "\\x%02x", byte);
          out += hex;
        } else {
          out += c;
        }
      }
    }
  }
}

void append_rendering(std::string& out, const Value& v) {
  switch (v.type()) {
    case Value::Type::nil:
      out += "nil";
      return;
    case Value::Type::integer:
      out += std::to_string(v.as_integer());
      return;
    case Value::Type::simple_string:
      append_escaped(out, v.as_string());
      return;
    case Value::Type::bulk_string:
      out += '"';
      append_escaped(out, v.as_string());
      out += '"';
      return;
    case Value::Type::error:
      out += "(error) ";
      append_escaped(out, v.as_string());
      return;
    case Value::Type::array: {
      out += '[';
      bool first = true;
      for (const Value& element : v.as_array()) {
        if (!first) out += ", ";
        first = false;
        append_rendering(out, element);
      }
      out += ']';
      return;
    }
  }
}

}  // namespace

Value Value::of_string(Type type, std::string s) {
  Value value;
  value.type_ = type;
  value.string_ = std::move(s);
  return value;
}

Value Value::integer(std::int64_t v) {
  Value value;
  value.type_ = Type::integer;
  value.integer_ = v;
  return value;
}

Value Value::simple_string(std::string s) {
  return of_string(Type::simple_string, std::move(s));
}

Value Value::bulk_string(std::string s) {
  return of_string(Type::bulk_string, std::move(s));
}

Value Value::error(std::string message) {
  return of_string(Type::error, std::move(message));
}

Value Value::array(std::vector<Value> elements) {
  Value value;
  value.type_ = Type::array;
  value.array_ = std::move(elements);
  return value;
}

std::int64_t Value::as_integer() const {
  if (type_ != Type::integer) throw_wrong_type("integer", type_);
  return integer_;
}

const std::string& Value::as_string() const {
  if (!is_string() && type_ != Type::error) throw_wrong_type("string", type_);
  return string_;
}

const std::vector<Value>& Value::as_array() const {
  if (type_ != Type::array) throw_wrong_type("array", type_);
  return array_;
}

std::vector<Value>& Value::as_array() {
  if (type_ != Type::array) throw_wrong_type("array", type_);
  return array_;
}

std::string Value::to_string() const {
  std::string out;
  append_rendering(out, *this);
  return out;
}

bool operator==(const Value& a, const Value& b) noexcept {
  if (a.type_ != b.type_) return false;
  switch (a.type_) {
    case Value::Type::nil:
      return true;
    case Value::Type::integer:
      return a.integer_ == b.integer_;
    case Value::Type::simple_string:
    case Value::Type::bulk_string:
    case Value::Type::error:
      return a.string_ == b.string_;
    case Value::Type::array:
      return a.array_ == b.array_;
  }
  return false;
}

std::string_view to_string(Value::Type t) noexcept {
  switch (t) {
    case Value::Type::nil:
      return "nil";
    case Value::Type::integer:
      return "integer";
    case Value::Type::simple_string:
      return "simple string";
    case Value::Type::bulk_string:
      return "bulk string";
    case Value::Type::error:
      return "error";
    case Value::Type::array:
      return "array";
  }
  return "unknown";
}

}  // namespace distlock
