// A small JSON parser for the cli tests: enough to read what `distlock
// ... --json` prints (objects, arrays, strings with escapes, integers, true,
// false, null), and strict: anything else, or trailing text, throws.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace distlock::test {

struct Json {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  std::int64_t number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  // The member `key` of an object; throws when absent or not an object.
  const Json& operator[](const std::string& key) const {
    if (type != Type::object) throw std::runtime_error("not an object: looking for " + key);
    const auto it = object.find(key);
    if (it == object.end()) throw std::runtime_error("no member " + key);
    return it->second;
  }
  bool is_null() const { return type == Type::null; }
};

class JsonParser {
 public:
  static Json parse(std::string_view text) {
    JsonParser p(text);
    Json v = p.value();
    p.skip_space();
    if (p.at_ != text.size()) p.fail("trailing text");
    return v;
  }

 private:
  explicit JsonParser(std::string_view text) : text_(text) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at " + std::to_string(at_) + " in " +
                             std::string(text_));
  }
  void skip_space() {
    while (at_ < text_.size() &&
           std::string_view(" \t\r\n").find(text_[at_]) != std::string_view::npos)
      ++at_;
  }
  char peek() {
    skip_space();
    if (at_ >= text_.size()) fail("unexpected end");
    return text_[at_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected ") + c);
    ++at_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  Json value() {
    Json v;
    const char c = peek();
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') {
      v.type = Json::Type::string;
      v.string = string();
    } else if (literal("true") || literal("false")) {
      v.type = Json::Type::boolean;
      v.boolean = text_[at_ - 1] == 'e' && text_[at_ - 2] == 'u';
    } else if (literal("null")) {
    } else {
      v.type = Json::Type::number;
      std::size_t used = 0;
      v.number = std::stoll(std::string(text_.substr(at_)), &used);
      at_ += used;
    }
    return v;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\') {
        const char e = text_.at(at_++);
        if (e == 'u') {
          out += static_cast<char>(std::stoi(std::string(text_.substr(at_, 4)), nullptr, 16));
          at_ += 4;
          continue;
        }
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        fail("raw control character in a string");
      }
      out += c;
    }
    expect('"');
    return out;
  }
  Json array() {
    Json v;
    v.type = Json::Type::array;
    expect('[');
    if (peek() == ']') return ++at_, v;
    for (;;) {
      v.array.push_back(value());
      if (peek() == ']') return ++at_, v;
      expect(',');
    }
  }
  Json object() {
    Json v;
    v.type = Json::Type::object;
    expect('{');
    if (peek() == '}') return ++at_, v;
    for (;;) {
      skip_space();
      std::string key = string();
      expect(':');
      v.object[key] = value();
      if (peek() == '}') return ++at_, v;
      expect(',');
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace distlock::test
