#include "bench_util.hpp"

#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "distlock/client.hpp"

namespace distlock_bench {

std::int64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Args::Args(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument: " + a);
    a = a.substr(2);
    if (i + 1 < argc && std::string_view(argv[i + 1]).rfind("--", 0) != 0) {
      values_[a] = argv[++i];
    } else {
      values_[a] = "1";  // a flag
    }
  }
}

bool Args::has(std::string_view name) const {
  return values_.find(name) != values_.end();
}

std::string Args::str(std::string_view name, std::string fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::int64_t Args::num(std::string_view name, std::int64_t fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : std::stoll(it->second);
}

double Args::real(std::string_view name, double fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : std::stod(it->second);
}

std::vector<int> Args::ints(std::string_view name, std::vector<int> fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  std::vector<int> out;
  std::stringstream in(it->second);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoi(item));
  return out;
}

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

namespace {

double at(const std::vector<std::int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  // Nearest rank: the smallest sample with at least q of the samples at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  const std::size_t i = rank == 0 ? 0 : std::min(rank - 1, sorted.size() - 1);
  return static_cast<double>(sorted[i]) / 1000.0;
}

}  // namespace

Latency summarize(std::vector<std::int64_t>& ns) {
  Latency l;
  l.samples = ns.size();
  if (ns.empty()) return l;
  std::sort(ns.begin(), ns.end());
  l.p50_us = at(ns, 0.50);
  l.p99_us = at(ns, 0.99);
  l.p999_us = at(ns, 0.999);
  l.max_us = static_cast<double>(ns.back()) / 1000.0;
  double sum = 0;
  for (const auto v : ns) sum += static_cast<double>(v);
  l.mean_us = sum / static_cast<double>(ns.size()) / 1000.0;
  return l;
}

void add_latency(JsonLine& line, std::string_view prefix, const Latency& l) {
  const std::string p(prefix);
  line.add(p + "_p50_us", l.p50_us)
      .add(p + "_p99_us", l.p99_us)
      .add(p + "_p999_us", l.p999_us)
      .add(p + "_max_us", l.max_us)
      .add(p + "_mean_us", l.mean_us);
}

std::map<std::string, std::uint64_t> command_calls(distlock::Client& client) {
  const distlock::Value reply = client.command("INFO", "commandstats");
  std::map<std::string, std::uint64_t> out;
  std::stringstream in(reply.as_string());
  std::string line;
  // cmdstat_evalsha:calls=12,usec=...
  while (std::getline(in, line)) {
    const std::string prefix = "cmdstat_";
    if (line.rfind(prefix, 0) != 0) continue;
    const auto colon = line.find(':');
    const auto calls = line.find("calls=", colon);
    if (colon == std::string::npos || calls == std::string::npos) continue;
    out[line.substr(prefix.size(), colon - prefix.size())] = std::stoull(line.substr(calls + 6));
  }
  return out;
}

std::map<std::string, std::uint64_t> delta(const std::map<std::string, std::uint64_t>& before,
                                           const std::map<std::string, std::uint64_t>& after) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [name, calls] : after) {
    const auto it = before.find(name);
    const std::uint64_t base = it == before.end() ? 0 : it->second;
    if (calls > base) out[name] = calls - base;
  }
  return out;
}

std::uint64_t client_commands(const std::map<std::string, std::uint64_t>& calls_delta,
                              const std::set<std::string>& inside_lua) {
  std::uint64_t n = 0;
  for (const auto& [name, calls] : calls_delta) {
    if (name == "info" || inside_lua.count(name) != 0) continue;
    n += calls;
  }
  return n;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> lua_called_commands(const std::string& dir) {
  std::set<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) throw std::runtime_error("cannot open Lua directory " + dir);
  static const std::regex call(R"(redis\.p?call\(\s*['"]([A-Za-z]+)['"])");
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 5 || name.substr(name.size() - 4) != ".lua") continue;
    const std::string text = read_file(dir + "/" + name);
    for (std::sregex_iterator it(text.begin(), text.end(), call), end; it != end; ++it) {
      std::string cmd = (*it)[1].str();
      std::transform(cmd.begin(), cmd.end(), cmd.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      out.insert(cmd);
    }
  }
  closedir(d);
  return out;
}

double cpu_seconds() noexcept {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

std::int64_t context_switches() noexcept {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::int64_t>(u.ru_nvcsw) + static_cast<std::int64_t>(u.ru_nivcsw);
}

std::int64_t voluntary_context_switches() noexcept {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::int64_t>(u.ru_nvcsw);
}

ServerCpu server_cpu(distlock::Client& client, int server_pid) {
  const distlock::Value reply = client.command("INFO", "cpu");
  std::stringstream in(reply.as_string());
  std::string line;
  ServerCpu out;
  int main_fields = 0;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    const double v = std::stod(line.substr(colon + 1));
    if (key == "used_cpu_sys" || key == "used_cpu_user") out.total += v;
    if (key == "used_cpu_sys_main_thread" || key == "used_cpu_user_main_thread") {
      out.main += v;
      ++main_fields;
    }
  }
  out.has_main = main_fields == 2;
  if (!out.has_main) out.main = out.total;
  if (server_pid > 0) {
    std::ifstream sched("/proc/" + std::to_string(server_pid) + "/schedstat");
    double run_ns = 0;
    double wait_ns = 0;
    if (sched >> run_ns >> wait_ns) {
      out.sched_run = run_ns / 1e9;
      out.sched_wait = wait_ns / 1e9;
    }
  }
  return out;
}

void add_server_ceiling(
    JsonLine& line, const ServerCpu& before, const ServerCpu& after, double pairs, double wall) {
  const double main = after.main - before.main;
  const double us_per_pair = pairs > 0 ? 1e6 * main / pairs : 0;
  line.add("server_cpu_source", after.has_main ? "main_thread" : "process")
      .add("server_main_cpu_s", main)
      .add("server_main_cpu_us_per_pair", us_per_pair)
      .add("server_ceiling_pairs_per_s", us_per_pair > 0 ? 1e6 / us_per_pair : 0.0)
      .add("server_core_utilization", wall > 0 ? main / wall : 0.0)
      // The same number as the utilization, read the other way round.
      .add("ratio_to_server_ceiling",
           us_per_pair > 0 && wall > 0 ? (pairs / wall) / (1e6 / us_per_pair) : 0.0);
  if (before.sched_wait >= 0 && after.sched_wait >= 0 && wall > 0) {
    line.add("server_runqueue_wait_share", (after.sched_wait - before.sched_wait) / wall);
  }
}

double server_cpu_seconds(distlock::Client& client) {
  const distlock::Value reply = client.command("INFO", "cpu");
  std::stringstream in(reply.as_string());
  std::string line;
  double total = 0;
  while (std::getline(in, line)) {
    for (const std::string key : {"used_cpu_sys:", "used_cpu_user:"}) {
      if (line.rfind(key, 0) == 0) total += std::stod(line.substr(key.size()));
    }
  }
  return total;
}

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

void emit(const JsonLine& line) {
  std::cout << line.str() << std::endl;
}

}  // namespace distlock_bench
