// The JSON lines the benchmark programs in bench/ print: one object per line
// on stdout.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace distlock_bench {

// Builds one JSON object on one line.
class JsonLine {
 public:
  JsonLine& add(std::string_view key, std::string_view value);
  JsonLine& add(std::string_view key, const char* value) {
    return add(key, std::string_view(value));
  }
  JsonLine& add(std::string_view key, double value);
  JsonLine& add(std::string_view key, std::int64_t value);
  JsonLine& add(std::string_view key, int value) { return add(key, std::int64_t{value}); }
  JsonLine& add(std::string_view key, std::uint64_t value) {
    return add(key, static_cast<std::int64_t>(value));
  }
  JsonLine& add(std::string_view key, bool value);
  // Adds `raw` (already valid JSON) as the value of `key`.
  JsonLine& add_raw(std::string_view key, std::string_view raw);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view k);
  std::string body_;
};

// Prints `line` to stdout and flushes.
void emit(const JsonLine& line);

}  // namespace distlock_bench
