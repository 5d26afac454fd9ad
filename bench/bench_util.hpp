// Small helpers shared by the benchmark programs in bench/: argument parsing,
// JSON lines, percentiles, server statistics and redis-benchmark runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace distlock {
class Client;
}

namespace distlock_bench {

using Clock = std::chrono::steady_clock;

// Nanoseconds on CLOCK_MONOTONIC (steady_clock on Linux), comparable across
// processes of one machine.
std::int64_t now_ns() noexcept;

// "--name value" pairs after an optional subcommand. Unknown names are kept;
// each program checks what it needs.
class Args {
 public:
  Args(int argc, char** argv, int first);
  bool has(std::string_view name) const;
  std::string str(std::string_view name, std::string fallback) const;
  std::int64_t num(std::string_view name, std::int64_t fallback) const;
  double real(std::string_view name, double fallback) const;
  // A comma-separated list of integers, e.g. "1,16,64".
  std::vector<int> ints(std::string_view name, std::vector<int> fallback) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

// Builds one JSON object on one line.
class JsonLine {
 public:
  JsonLine& add(std::string_view key, std::string_view value);
  JsonLine& add(std::string_view key, const char* value) {
    return add(key, std::string_view(value));
  }
  JsonLine& add(std::string_view key, double value);
  JsonLine& add(std::string_view key, std::int64_t value);
  JsonLine& add(std::string_view key, int value) { return add(key, std::int64_t{value}); }
  JsonLine& add(std::string_view key, std::uint64_t value) {
    return add(key, static_cast<std::int64_t>(value));
  }
  JsonLine& add(std::string_view key, bool value);
  // Adds `raw` (already valid JSON) as the value of `key`.
  JsonLine& add_raw(std::string_view key, std::string_view raw);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view k);
  std::string body_;
};

// Latency percentiles in microseconds of samples given in nanoseconds.
struct Latency {
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  double max_us = 0;
  double mean_us = 0;
  std::size_t samples = 0;
};
// Sorts `ns` in place.
Latency summarize(std::vector<std::int64_t>& ns);
void add_latency(JsonLine& line, std::string_view prefix, const Latency& l);

// `INFO commandstats` as command name -> calls.
std::map<std::string, std::uint64_t> command_calls(distlock::Client& client);
// after - before, per command (commands absent before count from zero).
std::map<std::string, std::uint64_t> delta(const std::map<std::string, std::uint64_t>& before,
                                           const std::map<std::string, std::uint64_t>& after);

// Round trips the clients made: every command counted by the server except
// those run from inside Lua scripts (`inside_lua`, see lua_called_commands),
// which Redis also counts in commandstats. The INFO calls of the measurement
// itself are not counted.
std::uint64_t client_commands(const std::map<std::string, std::uint64_t>& calls_delta,
                              const std::set<std::string>& inside_lua);
// Names of the commands called through redis.call / redis.pcall in every
// *.lua file of `dir`, lowercased.
std::set<std::string> lua_called_commands(const std::string& dir);
// The text of a file; throws std::runtime_error when it cannot be read.
std::string read_file(const std::string& path);

// User + system CPU seconds of this process so far.
double cpu_seconds() noexcept;
// Voluntary + involuntary context switches of this process's threads so far.
std::int64_t context_switches() noexcept;
// Voluntary context switches only (ru_nvcsw): a thread that went to sleep,
// typically to wait for a reply or for work. Every thread of this process.
std::int64_t voluntary_context_switches() noexcept;
// User + system CPU seconds the server has used so far (INFO cpu).
double server_cpu_seconds(distlock::Client& client);

// The server's CPU so far (INFO cpu): the whole process, and its main thread
// (used_cpu_sys_main_thread + used_cpu_user_main_thread, Redis 6.2 and
// later), which runs every command; has_main is false when the server does
// not report it, and main is then the whole process.
struct ServerCpu {
  double total = 0;
  double main = 0;
  bool has_main = false;
  // From /proc/<pid>/schedstat of the server's main thread when its pid is
  // known (the server runs on this machine): time on a CPU and time spent
  // runnable but waiting for one (another process had the core). Negative
  // when unknown.
  double sched_run = -1;
  double sched_wait = -1;
};
// `server_pid` 0: no schedstat.
ServerCpu server_cpu(distlock::Client& client, int server_pid = 0);

// The server's figures over one measured window of `pairs` lock+unlock pairs
// in `wall` seconds: CPU per pair (main thread when reported), the ceiling
// 1e6 / (CPU µs per pair) pairs/s, and the main thread's utilization (CPU
// seconds / wall seconds). pairs_per_s / ceiling equals the utilization.
// With schedstat, also the share of the window the server's main thread was
// runnable but waiting for its core: busy + waiting near 1 means the server
// was starved by other work on its core, not idle.
void add_server_ceiling(
    JsonLine& line, const ServerCpu& before, const ServerCpu& after, double pairs, double wall);

// One redis-benchmark run (with --csv). ok is false when it failed.
struct RbResult {
  bool ok = false;
  double rps = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  std::int64_t requests = 0;
};
// Runs `redis-benchmark -h host -p port -c clients -P pipeline --csv -n N
// <extra>`, choosing N so the run lasts about `seconds` (a short calibration
// run first, starting from `estimate_rps`).
RbResult redis_benchmark(const std::string& binary,
                         const std::string& host,
                         int port,
                         int clients,
                         int pipeline,
                         double seconds,
                         double estimate_rps,
                         const std::string& extra);

// Quotes one shell word.
std::string shell_quote(std::string_view word);

// Prints `line` to stdout and flushes.
void emit(const JsonLine& line);

}  // namespace distlock_bench
