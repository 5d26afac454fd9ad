#include "duration.hpp"

#include <charconv>
#include <cstdint>
#include <limits>

namespace distlock::cli {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  std::int64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [rest, err] = std::from_chars(begin, end, value);
  if (err != std::errc() || rest == begin || value < 0) return std::nullopt;
  const std::string_view unit(rest, static_cast<std::size_t>(end - rest));
  std::int64_t scale = 0;
  if (unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1000;
  } else if (unit == "m") {
    scale = 60'000;
  } else if (unit == "h") {
    scale = 3'600'000;
  } else if (unit.empty() && value == 0) {
    return std::chrono::milliseconds(0);
  } else {
    return std::nullopt;
  }
  if (value > std::numeric_limits<std::int64_t>::max() / scale) return std::nullopt;
  return std::chrono::milliseconds(value * scale);
}

}  // namespace distlock::cli
