// distlock top: a live table of the locks and synchronizers on the server.
//
// What the server does not store is derived from successive samples and
// labelled as such: "held for" is the time since this top first saw the
// current holder (so ">=" it), and acquisitions/s comes from the fencing
// counter, which only fenced locks have ("n/a" for the others).
#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <sstream>

#include "commands.hpp"
#include "distlock/error.hpp"
#include "exit_codes.hpp"
#include "inspect.hpp"
#include "sql_inspect.hpp"
#include "terminal.hpp"

namespace distlock::cli {
namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

// What top remembers of a name between samples.
struct Seen {
  std::string holder;  // the first holder's id, "" when free
  SteadyTime holder_since;
  std::optional<std::int64_t> counter;
  SteadyTime counter_at;
  std::string rate = "n/a";
};

std::string seconds_text(std::chrono::milliseconds d) {
  std::ostringstream o;
  o.precision(1);
  o << std::fixed << static_cast<double>(d.count()) / 1000.0 << "s";
  return o.str();
}

std::vector<std::string> row(const Entry& e, Seen& seen, SteadyTime now) {
  const std::string holder = e.holders.empty() ? "" : e.holders.front().id;
  if (holder != seen.holder) {
    seen.holder = holder;
    seen.holder_since = now;
  }
  if (e.fencing_counter && seen.counter && now > seen.counter_at) {
    const double dt = std::chrono::duration<double>(now - seen.counter_at).count();
    std::ostringstream o;
    o.precision(1);
    o << std::fixed << static_cast<double>(*e.fencing_counter - *seen.counter) / dt;
    seen.rate = o.str();
  }
  seen.counter = e.fencing_counter;
  seen.counter_at = now;
  const auto held = std::chrono::duration_cast<std::chrono::milliseconds>(now - seen.holder_since);
  std::string ttl = "-";
  if (e.ttl_ms) ttl = *e.ttl_ms < 0 ? "none" : seconds_text(std::chrono::milliseconds(*e.ttl_ms));
  std::string who = holder.empty() ? "-" : holder;
  if (e.holders.size() > 1) who += " (+" + std::to_string(e.holders.size() - 1) + ")";
  return {e.name,   e.kind,
          who,      holder.empty() ? "-" : ">=" + seconds_text(held),
          ttl,      e.waiters ? std::to_string(*e.waiters) : "-",
          seen.rate};
}

std::string render(const std::vector<std::vector<std::string>>& rows,
                   const std::string& title,
                   int max_rows,
                   int max_columns) {
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::ostringstream o;
  o << "\x1b[H\x1b[2J" << title.substr(0, static_cast<std::size_t>(max_columns)) << "\r\n";
  int shown = 0;
  for (const auto& r : rows) {
    if (++shown > max_rows - 3) break;
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i)
      line += r[i] + std::string(width[i] - r[i].size() + 2, ' ');
    o << (shown == 1 ? "\x1b[7m" : "") << line.substr(0, static_cast<std::size_t>(max_columns))
      << (shown == 1 ? "\x1b[0m" : "") << "\r\n";
  }
  o << "held for: since top first saw the holder. acq/s: fenced locks only (fencing counter)."
    << "\r\n";
  return o.str();
}

std::string title(const InspectOptions& o, std::size_t count) {
  const std::time_t t = std::time(nullptr);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", std::gmtime(&t));
  return "distlock top  " + o.pattern + "  " + std::to_string(count) + " names  every " +
         o.interval + "  " + clock + " UTC  (q quits)";
}

}  // namespace

int top_command(const InspectOptions& o) {
  std::optional<std::chrono::milliseconds> interval;
  if (!parse_duration_option("--interval", o.interval, interval)) return kExitUsage;
  if (!interval || interval->count() <= 0) {
    say(false, "--interval must be positive");
    return kExitUsage;
  }
  int code = 0;
  auto co = client_options(o.common, code);
  if (!co) return code;
  if (is_zookeeper(*co)) {
    return not_on_backend(*co, "top", "use distlock list or status on a ZooKeeper URI");
  }
  if (is_sql(*co)) return sql_no_listing(*co, "top");
  auto client = open_client(std::move(*co), o.common.quiet, code);
  if (!client) return code;
  std::map<std::string, Seen> seen;
  try {
    KeyScanner scanner(*client);
    Terminal terminal;
    for (;;) {
      const auto now = std::chrono::steady_clock::now();
      std::vector<std::vector<std::string>> rows{
          {"NAME", "KIND", "HOLDER", "HELD FOR", "TTL", "WAITERS", "ACQ/S"}};
      for (const std::string& key : scanner.keys(o.pattern)) {
        if (const auto e = inspect_key(*client, key)) rows.push_back(row(*e, seen[key], now));
      }
      std::cout << render(rows, title(o, rows.size() - 1), terminal.rows(), terminal.columns())
                << std::flush;
      const auto next = now + *interval;
      for (auto left = *interval; left.count() > 0;) {
        const char key = terminal.read_key(left);
        if (key == 'q' || key == 'Q') return 0;
        left = std::chrono::duration_cast<std::chrono::milliseconds>(
            next - std::chrono::steady_clock::now());
      }
    }
  } catch (const Error& e) {
    say(o.common.quiet, std::string("redis: ") + e.what());
    return exit_code_for(e.code());
  }
}

}  // namespace distlock::cli
