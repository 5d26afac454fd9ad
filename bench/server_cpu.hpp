// The server's CPU (INFO cpu, and /proc/<pid>/schedstat when the server runs
// on this machine) over a measured window, and the ceiling it implies.
#pragma once

#include "json_line.hpp"

namespace distlock {
class Client;
}

namespace distlock_bench {

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

}  // namespace distlock_bench
