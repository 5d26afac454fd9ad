#include "json_line.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>

namespace distlock_bench {

void JsonLine::key(std::string_view k) {
  if (!body_.empty()) body_ += ',';
  body_ += '"';
  body_.append(k);
  body_ += "\":";
}

JsonLine& JsonLine::add(std::string_view k, std::string_view value) {
  key(k);
  body_ += '"';
  for (const char c : value) {
    if (c == '"' || c == '\\') {
      body_ += '\\';
      body_ += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      body_ += buf;
    } else {
      body_ += c;
    }
  }
  body_ += '"';
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, double value) {
  key(k);
  if (!std::isfinite(value)) {
    body_ += "null";
    return *this;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  body_ += buf;
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, std::int64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, bool value) {
  key(k);
  body_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::add_raw(std::string_view k, std::string_view raw) {
  key(k);
  body_.append(raw);
  return *this;
}

void emit(const JsonLine& line) {
  std::cout << line.str() << std::endl;
}

}  // namespace distlock_bench
