#include "process_stats.hpp"

#include <sys/resource.h>

namespace distlock_bench {

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

}  // namespace distlock_bench
