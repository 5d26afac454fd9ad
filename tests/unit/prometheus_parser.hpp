// A strict parser of the Prometheus text exposition format 0.0.4, for the
// metrics tests: it throws std::runtime_error naming the line for anything
// the format (or a histogram's invariants) does not allow.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace distlock::test {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct PromFamily {
  std::string type;
  std::string help;
  std::vector<PromSample> samples;
};

struct PromText {
  std::map<std::string, PromFamily> families;

  // The value of the one sample `name` with exactly `labels`; throws if none.
  double value(const std::string& name, const std::map<std::string, std::string>& labels) const {
    for (const auto& [family_name, family] : families) {
      for (const auto& s : family.samples) {
        if (s.name == name && s.labels == labels) return s.value;
      }
    }
    throw std::runtime_error("no sample " + name);
  }
};

namespace prom_detail {

inline bool name_char(char c, bool first, bool colon) {
  const bool letter =
      std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (colon && c == ':');
  return letter || (!first && std::isdigit(static_cast<unsigned char>(c)));
}

inline bool valid_name(std::string_view n, bool colon) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (!name_char(n[i], i == 0, colon)) return false;
  }
  return true;
}

class LineParser {
 public:
  LineParser(std::string_view line, int number) : s_(line), number_(number) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("line " + std::to_string(number_) + ": " + why + ": '" +
                             std::string(s_) + "'");
  }

  PromSample sample() {
    PromSample out;
    out.name = take_name(true);
    if (!valid_name(out.name, true)) fail("bad metric name");
    if (peek() == '{') labels(out.labels);
    if (peek() != ' ') fail("expected one space before the value");
    ++i_;
    const auto rest = s_.substr(i_);
    if (rest.find(' ') != std::string_view::npos) fail("unexpected timestamp or trailing text");
    out.value = number(rest);
    return out;
  }

  double number(std::string_view v) const {
    if (v == "+Inf") return std::numeric_limits<double>::infinity();
    if (v == "-Inf") return -std::numeric_limits<double>::infinity();
    if (v == "NaN") return std::numeric_limits<double>::quiet_NaN();
    double d = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), d);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size()) fail("bad number");
    return d;
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }

  std::string take_name(bool colon) {
    const auto start = i_;
    while (i_ < s_.size() && name_char(s_[i_], i_ == start, colon)) ++i_;
    return std::string(s_.substr(start, i_ - start));
  }

  void labels(std::map<std::string, std::string>& out) {
    ++i_;  // '{'
    while (peek() != '}') {
      const auto name = take_name(false);
      if (!valid_name(name, false) || name.starts_with("__")) fail("bad label name");
      if (peek() != '=') fail("expected '='");
      ++i_;
      if (peek() != '"') fail("expected '\"'");
      ++i_;
      std::string value;
      for (;;) {
        if (i_ >= s_.size()) fail("unterminated label value");
        const char c = s_[i_++];
        if (c == '"') break;
        if (c == '\\') {
          const char e = peek();
          ++i_;
          if (e == '\\' || e == '"') {
            value += e;
          } else if (e == 'n') {
            value += '\n';
          } else {
            fail("bad escape in label value");
          }
        } else {
          value += c;
        }
      }
      if (!out.emplace(name, value).second) fail("duplicate label " + name);
      if (peek() == ',') {
        ++i_;
      } else if (peek() != '}') {
        fail("expected ',' or '}'");
      }
    }
    ++i_;  // '}'
  }

  std::string_view s_;
  int number_;
  std::size_t i_ = 0;
};

// The family a sample belongs to, given the current family and its type.
inline bool belongs(const std::string& sample, const std::string& family, const std::string& type) {
  if (sample == family) return type != "histogram";
  if (type != "histogram") return false;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    if (sample == family + suffix) return true;
  }
  return false;
}

inline void check_histogram(const std::string& name, const PromFamily& f) {
  // Per label set without `le`: buckets in ascending le, cumulative, ending
  // in +Inf, and _count equal to the +Inf bucket.
  std::map<std::map<std::string, std::string>, std::vector<std::pair<double, double>>> buckets;
  std::map<std::map<std::string, std::string>, double> counts;
  std::set<std::map<std::string, std::string>> sums;
  for (const auto& s : f.samples) {
    auto labels = s.labels;
    if (s.name == name + "_bucket") {
      const auto le = labels.find("le");
      if (le == labels.end()) throw std::runtime_error(name + ": bucket without le");
      const double bound = LineParser(le->second, 0).number(le->second);
      labels.erase(le);
      buckets[labels].emplace_back(bound, s.value);
    } else if (s.name == name + "_count") {
      counts[labels] = s.value;
    } else {
      sums.insert(labels);
    }
  }
  if (buckets.empty()) throw std::runtime_error(name + ": histogram without buckets");
  for (const auto& [labels, list] : buckets) {
    for (std::size_t i = 1; i < list.size(); ++i) {
      if (!(list[i].first > list[i - 1].first))
        throw std::runtime_error(name + ": le not ascending");
      if (list[i].second < list[i - 1].second) throw std::runtime_error(name + ": not cumulative");
    }
    if (!std::isinf(list.back().first)) throw std::runtime_error(name + ": no +Inf bucket");
    if (!counts.count(labels) || counts.at(labels) != list.back().second) {
      throw std::runtime_error(name + ": _count differs from the +Inf bucket");
    }
    if (!sums.count(labels)) throw std::runtime_error(name + ": no _sum");
  }
}

}  // namespace prom_detail

// Parses `text`; throws std::runtime_error on the first violation.
inline PromText parse_prometheus(std::string_view text) {
  using namespace prom_detail;
  PromText out;
  if (!text.empty() && text.back() != '\n') throw std::runtime_error("no final line feed");
  std::string current;  // the family of the last TYPE line
  std::set<std::string> series;
  int number = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const auto end = text.find('\n', pos);
    const auto line = text.substr(pos, end - pos);
    pos = end + 1;
    LineParser p(line, ++number);
    if (line.empty()) p.fail("empty line");
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
      const auto rest = line.substr(7);
      const auto sp = rest.find(' ');
      if (sp == std::string_view::npos) p.fail("HELP/TYPE without text");
      const std::string name(rest.substr(0, sp));
      const std::string what(rest.substr(sp + 1));
      if (!valid_name(name, true)) p.fail("bad metric name");
      auto& f = out.families[name];
      if (line[2] == 'H') {
        if (!f.help.empty()) p.fail("second HELP");
        f.help = what;
      } else {
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                     "untyped"};
        if (!f.type.empty()) p.fail("second TYPE");
        if (!f.samples.empty()) p.fail("TYPE after samples");
        if (!kTypes.count(what)) p.fail("unknown type");
        if (what == "counter" && !name.ends_with("_total")) p.fail("counter without _total");
        f.type = what;
        current = name;
      }
      continue;
    }
    if (line.front() == '#') p.fail("unexpected comment");
    auto sample = p.sample();
    if (current.empty() || !belongs(sample.name, current, out.families[current].type)) {
      p.fail("sample outside its family's TYPE block");
    }
    std::string key = sample.name;
    for (const auto& [k, v] : sample.labels) key += "\x01" + k + "=" + v;
    if (!series.insert(key).second) p.fail("duplicate series");
    out.families[current].samples.push_back(std::move(sample));
  }
  for (const auto& [name, f] : out.families) {
    if (f.type.empty() || f.help.empty()) throw std::runtime_error(name + ": no TYPE or HELP");
    if (f.type == "histogram") check_histogram(name, f);
  }
  return out;
}

}  // namespace distlock::test
