#include "sync/arguments.hpp"

namespace distlock::sync {
namespace {

constexpr std::size_t kMaxName = 64 * 1024;

std::string lease_problem(std::optional<milliseconds> lease) {
  if (!lease || lease->count() > 0) return {};
  return "lease must be positive, got " + std::to_string(lease->count()) + " ms";
}

std::string wait_problem(std::optional<milliseconds> wait) {
  if (!wait || wait->count() >= 0) return {};
  return "wait must not be negative, got " + std::to_string(wait->count()) + " ms";
}

void throw_problem(std::string_view prefix, const std::string& problem) {
  if (!problem.empty()) throw Error(errc::invalid_argument, std::string(prefix) + problem);
}

}  // namespace

void validate_name(const std::string& name, std::string_view what) {
  if (name.empty()) throw Error(errc::invalid_argument, std::string(what) + " name is empty");
  if (name.size() > kMaxName) {
    throw Error(errc::invalid_argument, std::string(what) + " name is " +
                                            std::to_string(name.size()) +
                                            " bytes; at most 65536 are allowed");
  }
}

std::string wait_lease_problem(std::optional<milliseconds> wait,
                               std::optional<milliseconds> lease) {
  std::string problem = wait_problem(wait);
  return problem.empty() ? lease_problem(lease) : problem;
}

void check_wait(std::optional<milliseconds> wait, std::string_view prefix) {
  throw_problem(prefix, wait_problem(wait));
}

void check_lease(std::optional<milliseconds> lease, std::string_view prefix) {
  throw_problem(prefix, lease_problem(lease));
}

bool rejected(std::optional<milliseconds> wait,
              std::optional<milliseconds> lease,
              std::error_code& ec) {
  ec.clear();
  if ((wait && wait->count() < 0) || (lease && lease->count() <= 0)) {
    ec = errc::invalid_argument;
  }
  return static_cast<bool>(ec);
}

milliseconds checked_lock_delay(const LockOptions& options) {
  const auto d = options.lock_delay;
  if (d < milliseconds(0) || d >= std::chrono::hours(24)) {
    throw Error(errc::invalid_argument,
                "lock_delay must be at least 0 ms and under 24 hours, got " +
                    std::to_string(d.count()) + " ms");
  }
  return d;
}

}  // namespace distlock::sync
