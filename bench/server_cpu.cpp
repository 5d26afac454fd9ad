#include "server_cpu.hpp"

#include <fstream>
#include <sstream>
#include <string>

#include "distlock/client.hpp"

namespace distlock_bench {

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

}  // namespace distlock_bench
