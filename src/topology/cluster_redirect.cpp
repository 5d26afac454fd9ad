#include "topology/cluster_redirect.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "topology/slot.hpp"

namespace distlock::topology {
namespace {

using Kind = ClusterRedirect::Kind;

// The decimal number that is all of `text` when it lies in [low, high].
std::optional<std::uint16_t> bounded(std::string_view text, std::int64_t low, std::int64_t high) {
  std::int64_t v = 0;
  const auto* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || v < low || v > high) return std::nullopt;
  return static_cast<std::uint16_t>(v);
}

// "<slot> <host>:<port>" after MOVED or ASK; false when it does not parse.
bool parse_target(std::string_view text, ClusterRedirect& out) {
  const auto space = text.find(' ');
  const auto colon = text.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) {
    return false;
  }
  const auto slot = bounded(text.substr(0, space), 0, kSlotCount - 1);
  const auto port = bounded(text.substr(colon + 1), 1, 65535);
  if (!slot || !port || colon == space + 1) return false;
  out.slot = *slot;
  out.host = std::string(text.substr(space + 1, colon - space - 1));
  out.port = *port;
  return true;
}

// The refusal `text` starts with as its whole first word, or other_error.
Kind refusal_kind(std::string_view text) {
  static constexpr std::pair<std::string_view, Kind> kCodes[] = {
      {"TRYAGAIN", Kind::try_again},
      {"CLUSTERDOWN", Kind::cluster_down},
      {"LOADING", Kind::loading},
      {"MASTERDOWN", Kind::master_down},
  };
  for (const auto& [code, kind] : kCodes) {
    if (text.starts_with(code) && (text.size() == code.size() || text[code.size()] == ' ')) {
      return kind;
    }
  }
  return Kind::other_error;
}

}  // namespace

ClusterRedirect ClusterRedirect::classify(const Value& reply) {
  ClusterRedirect r;
  if (!reply.is_error()) return r;
  std::string_view text = reply.as_string();
  if (text.starts_with("MOVED ")) {
    r.kind = Kind::moved;
    text.remove_prefix(6);
  } else if (text.starts_with("ASK ")) {
    r.kind = Kind::ask;
    text.remove_prefix(4);
  } else {
    r.kind = refusal_kind(text);
    return r;
  }
  if (parse_target(text, r)) return r;
  ClusterRedirect malformed;
  malformed.kind = Kind::other_error;
  return malformed;
}

std::optional<std::chrono::milliseconds> cluster_retry_delay(std::chrono::milliseconds waited,
                                                             std::chrono::milliseconds limit) {
  using std::chrono::milliseconds;
  const milliseconds delay =
      std::min(milliseconds(200), std::max(milliseconds(0), waited) + milliseconds(10));
  if (waited + delay > limit) return std::nullopt;
  return delay;
}

}  // namespace distlock::topology
