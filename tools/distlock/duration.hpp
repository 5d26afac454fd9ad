// Durations on the command line: "250ms", "10s", "5m", "1h", "0".
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace distlock::cli {

// Parses a non-negative whole number followed by a unit: ms, s, m or h.
// "0" alone (no unit) is zero; a bare non-zero number is rejected (it is
// ambiguous: seconds or milliseconds?). Returns nullopt for anything else
// (empty, negative, fractional, unknown unit, overflow). Never throws.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace distlock::cli
