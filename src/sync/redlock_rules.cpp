#include "sync/redlock_rules.hpp"

#include <algorithm>
#include <optional>

#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/key_layout.hpp"
#include "sync/redlock_primitive.hpp"
#include "topology/quorum.hpp"

namespace distlock::sync {
namespace {

using topology::FollowUp;
using topology::NodeAnswer;
using topology::QuorumRule;
using topology::Verdict;

// simple_acquire.lua answers nil when it set the token.
bool took(const NodeAnswer& a) {
  return a.answered && !a.ec && a.reply.is_nil();
}

// The compare-and-delete of `token` on `name`, publishing its release tag.
FollowUp delete_token(const std::string& name, const std::string& token) {
  return FollowUp{&script::scripts().simple_release,
                  {name},
                  {token, simple_lock_channel(name), redlock_release_tag(token)}};
}

Verdict timeout() {
  return {make_error_code(errc::timeout), Value()};
}

class AcquireRule final : public QuorumRule {
 public:
  bool settled(std::span<const NodeAnswer> answers, std::size_t quorum) const override {
    const auto yes = std::count_if(answers.begin(), answers.end(), took);
    const auto answered =
        std::count_if(answers.begin(), answers.end(), [](const auto& a) { return a.answered; });
    // A majority, or one can no longer be reached.
    const auto n = static_cast<std::ptrdiff_t>(answers.size());
    const auto q = static_cast<std::ptrdiff_t>(quorum);
    return yes >= q || answered - yes > n - q;
  }

  Verdict verdict(std::span<const NodeAnswer> answers, std::size_t quorum) const override {
    const auto yes = std::count_if(answers.begin(), answers.end(), took);
    if (static_cast<std::size_t>(yes) >= quorum) return {{}, Value()};
    const topology::Tally t = topology::tally(answers);
    if (t.refused >= quorum) return {{}, *t.first_error};
    // Contention: retry after the shortest TTL a holder's key has (or the
    // group's poll when none has one: nodes down, keys without expiry).
    std::optional<std::int64_t> shortest;
    for (const auto& a : answers) {
      if (a.replied() && a.reply.is_integer() && a.reply.as_integer() >= 0) {
        shortest = std::min(shortest.value_or(a.reply.as_integer()), a.reply.as_integer());
      }
    }
    return {{}, Value::integer(shortest.value_or(-1))};
  }

  std::vector<FollowUp> follow_up(const Verdict& verdict,
                                  std::span<const std::string> keys,
                                  std::span<const std::string> args) const override {
    if (!verdict.ec && verdict.reply.is_nil()) return {};  // held
    if (keys.empty() || args.size() < 2) return {};
    // Not held: delete this attempt's token wherever it landed or will land.
    return {delete_token(keys[0], args[1])};
  }
};

class ReleaseRule final : public QuorumRule {
 public:
  bool settled(std::span<const NodeAnswer> answers, std::size_t quorum) const override {
    const Counts c = count(answers);
    return c.deleted >= quorum || c.gone > answers.size() - quorum || c.answered == answers.size();
  }

  Verdict verdict(std::span<const NodeAnswer> answers, std::size_t quorum) const override {
    const topology::Tally t = topology::tally(answers);
    if (t.refused >= quorum) return {{}, *t.first_error};
    const Counts c = count(answers);
    if (c.deleted >= quorum) return {{}, Value::integer(1)};
    if (c.gone > answers.size() - quorum) return {{}, Value::integer(-1)};
    return timeout();
  }

 private:
  struct Counts {
    std::size_t deleted = 0, gone = 0, answered = 0;
  };
  static Counts count(std::span<const NodeAnswer> answers) {
    Counts c;
    for (const auto& a : answers) {
      if (a.answered) ++c.answered;
      if (a.integer(1)) ++c.deleted;
      if (a.integer(-1)) ++c.gone;
    }
    return c;
  }
};

class RenewRule final : public QuorumRule {
 public:
  Verdict verdict(std::span<const NodeAnswer> answers, std::size_t quorum) const override {
    std::size_t holdings = 0;
    for (const auto& a : answers) {
      if (a.replied() && a.reply.is_array()) {
        holdings = std::max(holdings, a.reply.as_array().size());
      }
    }
    if (holdings == 0) return timeout();  // no node answered: nothing is known
    std::vector<Value> result;
    result.reserve(holdings);
    for (std::size_t i = 0; i < holdings; ++i) {
      std::size_t held = 0, not_held = 0;
      for (const auto& a : answers) {
        if (!a.replied() || !a.reply.is_array() || a.reply.as_array().size() <= i) continue;
        const Value& v = a.reply.as_array()[i];
        (v.is_integer() && v.as_integer() == 1 ? held : not_held) += 1;
      }
      const std::int64_t r = held >= quorum ? 1 : not_held > answers.size() - quorum ? 0 : -1;
      result.push_back(Value::integer(r));
    }
    return {{}, Value::array(std::move(result))};
  }

  // A holding not renewed on a majority is lost: what is left of it on the
  // nodes that still have it is deleted now, not left to block others.
  std::vector<FollowUp> follow_up(const Verdict& verdict,
                                  std::span<const std::string> keys,
                                  std::span<const std::string> args) const override {
    std::vector<FollowUp> out;
    if (verdict.ec || !verdict.reply.is_array()) return out;
    const auto& results = verdict.reply.as_array();
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (results[i].as_integer() == 1 || 2 * i >= keys.size() || 3 * i + 1 >= args.size()) {
        continue;
      }
      if (args[3 * i] != "s") continue;  // a SET NX token: the only kind on a group
      out.push_back(delete_token(keys[2 * i], args[3 * i + 1]));
    }
    return out;
  }
};

class ForceReleaseRule final : public QuorumRule {
 public:
  Verdict verdict(std::span<const NodeAnswer> answers, std::size_t quorum) const override {
    const topology::Tally t = topology::tally(answers);
    if (t.refused >= quorum) return {{}, *t.first_error};
    if (t.replied < quorum) return timeout();
    const bool any =
        std::any_of(answers.begin(), answers.end(), [](const auto& a) { return a.integer(1); });
    return {{}, Value::integer(any ? 1 : 0)};
  }
};

}  // namespace

std::shared_ptr<const QuorumRule> redlock_acquire_rule() {
  return std::make_shared<AcquireRule>();
}
std::shared_ptr<const QuorumRule> redlock_release_rule() {
  return std::make_shared<ReleaseRule>();
}
std::shared_ptr<const QuorumRule> redlock_renew_rule() {
  return std::make_shared<RenewRule>();
}
std::shared_ptr<const QuorumRule> redlock_force_release_rule() {
  return std::make_shared<ForceReleaseRule>();
}

void install_redlock_rules(topology::Quorum& quorum) {
  const auto& s = script::scripts();
  quorum.set_rule(s.simple_acquire, redlock_acquire_rule());
  quorum.set_rule(s.simple_release, redlock_release_rule());
  quorum.set_rule(s.renew, redlock_renew_rule());
  quorum.set_rule(s.force_release, redlock_force_release_rule());
}

}  // namespace distlock::sync
