#include "redis_benchmark.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

namespace distlock_bench {

std::string shell_quote(std::string_view word) {
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

namespace {

// Splits one CSV line of quoted fields.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (const char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

RbResult run_once(const std::string& command, std::int64_t requests) {
  RbResult r;
  r.requests = requests;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  if (pclose(p) != 0) return r;
  std::stringstream in(out);
  std::string line;
  // The last data line: the command itself, or PING_MBULK for -t ping.
  while (std::getline(in, line)) {
    const auto f = csv_fields(line);
    if (f.size() < 8 || f[0] == "test") continue;
    const std::size_t n = f.size();
    r.rps = std::stod(f[n - 7]);
    r.p50_ms = std::stod(f[n - 4]);
    r.p99_ms = std::stod(f[n - 2]);
    r.ok = true;
  }
  return r;
}

}  // namespace

RbResult redis_benchmark(const std::string& binary,
                         const std::string& host,
                         int port,
                         int clients,
                         int pipeline,
                         double seconds,
                         double estimate_rps,
                         const std::string& extra) {
  auto command = [&](std::int64_t n) {
    std::string c = shell_quote(binary) + " -h " + host + " -p " + std::to_string(port) + " -c " +
                    std::to_string(clients) + " -P " + std::to_string(pipeline) + " -n " +
                    std::to_string(n) + " --csv " + extra + " 2>/dev/null";
    return c;
  };
  // A short run sizes the real one so it lasts about `seconds`.
  auto n = static_cast<std::int64_t>(std::max(2000.0, estimate_rps * seconds / 4));
  RbResult r = run_once(command(n), n);
  if (!r.ok) return r;
  n = static_cast<std::int64_t>(std::max(2000.0, r.rps * seconds));
  return run_once(command(n), n);
}

}  // namespace distlock_bench
