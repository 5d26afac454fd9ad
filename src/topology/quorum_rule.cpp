#include "topology/quorum_rule.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <string_view>

#include "distlock/error.hpp"

namespace distlock::topology {
namespace {

bool same_verb(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

// The first error reply when a majority refused; otherwise nullopt.
std::optional<Verdict> refused_by_majority(const Tally& t, std::size_t quorum) {
  if (t.refused >= quorum) return Verdict{{}, *t.first_error};
  return std::nullopt;
}

Verdict too_few() {
  return {make_error_code(errc::timeout), Value()};
}

class ExistsRule final : public QuorumRule {
 public:
  bool settled(std::span<const NodeAnswer> answers, std::size_t quorum) const override {
    std::size_t yes = 0, no = 0;
    for (const auto& a : answers) {
      if (a.integer(1)) ++yes;
      if (a.integer(0)) ++no;
    }
    return yes >= quorum || no >= quorum;
  }
  Verdict verdict(std::span<const NodeAnswer> answers, std::size_t quorum) const override {
    const Tally t = tally(answers);
    if (auto r = refused_by_majority(t, quorum)) return *r;
    std::size_t yes = 0, no = 0;
    for (const auto& a : answers) {
      if (a.integer(1)) ++yes;
      if (a.integer(0)) ++no;
    }
    if (yes >= quorum) return {{}, Value::integer(1)};
    if (no >= quorum) return {{}, Value::integer(0)};
    return too_few();
  }
};

class PttlRule final : public QuorumRule {
 public:
  Verdict verdict(std::span<const NodeAnswer> answers, std::size_t quorum) const override {
    const Tally t = tally(answers);
    if (auto r = refused_by_majority(t, quorum)) return *r;
    std::vector<std::int64_t> ttls;  // -1 (no expiry) as the largest
    for (const auto& a : answers) {
      if (!a.replied() || !a.reply.is_integer()) continue;
      const std::int64_t v = a.reply.as_integer();
      ttls.push_back(v == -1 ? std::numeric_limits<std::int64_t>::max() : v);
    }
    if (ttls.size() < quorum) return too_few();
    std::sort(ttls.begin(), ttls.end(), std::greater<>());
    const std::int64_t v = ttls[quorum - 1];
    return {{}, Value::integer(v == std::numeric_limits<std::int64_t>::max() ? -1 : v)};
  }
};

}  // namespace

bool QuorumRule::settled(std::span<const NodeAnswer> answers, std::size_t) const {
  return std::all_of(answers.begin(), answers.end(), [](const auto& a) { return a.answered; });
}

std::vector<FollowUp> QuorumRule::follow_up(const Verdict&,
                                            std::span<const std::string>,
                                            std::span<const std::string>) const {
  return {};
}

Tally tally(std::span<const NodeAnswer> answers) {
  Tally t;
  for (const auto& a : answers) {
    if (!a.answered) continue;
    ++t.answered;
    if (a.ec) continue;
    if (a.reply.is_error()) {
      if (t.refused++ == 0) t.first_error = &a.reply;
    } else {
      ++t.replied;
    }
  }
  return t;
}

Verdict MajorityRule::verdict(std::span<const NodeAnswer> answers, std::size_t quorum) const {
  const Tally t = tally(answers);
  if (auto r = refused_by_majority(t, quorum)) return *r;
  for (const auto& a : answers) {
    if (!a.replied()) continue;
    const auto agreeing = std::count_if(answers.begin(), answers.end(), [&](const auto& b) {
      return b.replied() && b.reply == a.reply;
    });
    if (static_cast<std::size_t>(agreeing) >= quorum) return {{}, a.reply};
  }
  return too_few();
}

const QuorumRule& command_rule(std::string_view verb) {
  static const ExistsRule exists;
  static const PttlRule pttl;
  static const MajorityRule majority;
  if (same_verb(verb, "EXISTS")) return exists;
  if (same_verb(verb, "PTTL")) return pttl;
  return majority;
}

}  // namespace distlock::topology
