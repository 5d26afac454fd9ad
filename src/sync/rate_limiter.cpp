// RateLimiter: try_set_rate and available_permits are one script each; the
// acquires run the shared AcquireLoop with RateLimiterStep, which sleeps the
// server's wait (no channel). Validation happens here, before any I/O; the
// checks that need the configured rate (n > rate, no rate set) are the
// script's, which then changes nothing.
#include "distlock/rate_limiter.hpp"

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/arguments.hpp"
#include "sync/blocking_call.hpp"
#include "sync/rate_limiter_step.hpp"
#include "sync/services.hpp"

namespace distlock {
namespace {

// The server's arithmetic is in doubles: rate * interval in microseconds
// must stay below 2^53 to be exact.
constexpr std::int64_t kMaxScaled = std::int64_t{1} << 53;

// Empty when valid, else what is wrong.
std::string check_rate(std::int64_t permits, std::chrono::milliseconds interval) {
  if (permits <= 0) return "permits is " + std::to_string(permits) + "; it must be > 0";
  if (interval.count() <= 0) {
    return "interval is " + std::to_string(interval.count()) + " ms; it must be > 0";
  }
  if (interval.count() > kMaxScaled / 1000 || permits > kMaxScaled / (interval.count() * 1000)) {
    return "permits * interval is too large (permits * interval in microseconds must be at "
           "most 2^53)";
  }
  return {};
}

std::string check_n(std::int64_t n) {
  if (n <= 0) return "n is " + std::to_string(n) + "; it must be > 0";
  return {};
}

}  // namespace

RateLimiter::RateLimiter(std::shared_ptr<sync::Services> client, std::string name)
    : client_(std::move(client)) {
  sync::validate_name(name, "rate limiter");
  name_ = std::make_shared<const std::string>(std::move(name));
}

bool RateLimiter::try_set_rate(std::int64_t permits,
                               std::chrono::milliseconds interval,
                               std::error_code& ec) {
  ec.clear();
  if (!check_rate(permits, interval).empty()) {
    ec = errc::invalid_argument;
    return false;
  }
  const std::string p = std::to_string(permits), i = std::to_string(interval.count());
  const std::string_view keys[] = {*name_};
  const std::string_view args[] = {p, i};
  std::string what;
  const Value v = sync::call_script_blocking(*client_, *name_, script::scripts().rate_limiter_set,
                                             keys, args, ec, what);
  return !ec && v.is_integer() && v.as_integer() == 1;
}

bool RateLimiter::try_set_rate(std::int64_t permits, std::chrono::milliseconds interval) {
  if (auto bad = check_rate(permits, interval); !bad.empty()) {
    throw Error(errc::invalid_argument, "rate limiter '" + *name_ + "': " + bad);
  }
  std::error_code ec;
  const bool set = try_set_rate(permits, interval, ec);
  sync::throw_if(ec, "try_set_rate of rate limiter '" + *name_ + "' failed");
  return set;
}

bool RateLimiter::run(std::int64_t n,
                      const std::chrono::steady_clock::time_point* deadline,
                      std::error_code& ec,
                      std::string& what) {
  ec.clear();
  if (auto bad = check_n(n); !bad.empty()) {
    ec = errc::invalid_argument;
    what = "rate limiter '" + *name_ + "': " + bad;
    return false;
  }
  std::optional<sync::Clock::time_point> until;
  if (deadline != nullptr) until = *deadline;
  auto outcome = sync::acquire_step_blocking(
      *client_, std::make_unique<sync::RateLimiterStep>(name_, n, until), until);
  ec = outcome.ec;
  what = std::move(outcome.message);
  return !ec && outcome.acquired;
}

bool RateLimiter::try_acquire(std::int64_t n, std::error_code& ec) {
  return try_acquire_until(n, std::chrono::steady_clock::time_point::min(), ec);
}

bool RateLimiter::try_acquire(std::int64_t n) {
  return try_acquire_until(n, std::chrono::steady_clock::time_point::min());
}

bool RateLimiter::try_acquire_until(std::int64_t n,
                                    std::chrono::steady_clock::time_point deadline,
                                    std::error_code& ec) {
  std::string what;
  return run(n, &deadline, ec, what);
}

bool RateLimiter::try_acquire_until(std::int64_t n,
                                    std::chrono::steady_clock::time_point deadline) {
  std::error_code ec;
  std::string what;
  const bool got = run(n, &deadline, ec, what);
  sync::throw_if(ec, what);
  return got;
}

bool RateLimiter::try_acquire_for_ms(std::int64_t n,
                                     std::chrono::milliseconds wait,
                                     std::error_code& ec) {
  if (sync::rejected(wait, std::nullopt, ec)) return false;
  // No deadline for a wait too long for the clock (milliseconds::max()).
  const auto deadline = sync::deadline_after(wait);
  std::string what;
  return run(n, deadline ? &*deadline : nullptr, ec, what);
}

bool RateLimiter::try_acquire_for_ms(std::int64_t n, std::chrono::milliseconds wait) {
  sync::check_wait(wait, "rate limiter '" + *name_ + "': ");
  std::error_code ec;
  std::string what;
  const auto deadline = sync::deadline_after(wait);
  const bool got = run(n, deadline ? &*deadline : nullptr, ec, what);
  sync::throw_if(ec, what);
  return got;
}

void RateLimiter::acquire(std::int64_t n, std::error_code& ec) {
  std::string what;
  run(n, nullptr, ec, what);
}

void RateLimiter::acquire(std::int64_t n) {
  std::error_code ec;
  std::string what;
  run(n, nullptr, ec, what);
  sync::throw_if(ec, what);
}

std::int64_t RateLimiter::available_permits(std::error_code& ec) const {
  const std::string_view keys[] = {*name_};
  std::string what;
  const Value v = sync::call_script_blocking(
      *client_, *name_, script::scripts().rate_limiter_available, keys, {}, ec, what);
  if (ec) return 0;
  if (!v.is_integer()) {
    ec = errc::protocol_error;
    return 0;
  }
  if (v.as_integer() < 0) {
    ec = errc::invalid_argument;
    return 0;
  }
  return v.as_integer();
}

std::int64_t RateLimiter::available_permits() const {
  std::error_code ec;
  const auto n = available_permits(ec);
  if (ec == errc::invalid_argument) {
    throw Error(ec, "rate limiter '" + *name_ + "' has no rate set; call try_set_rate");
  }
  sync::throw_if(ec, "available_permits of rate limiter '" + *name_ + "' failed");
  return n;
}

RateLimiter Client::rate_limiter(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return RateLimiter(sync::services_for(impl_, "rate limiter"), std::move(name));
}

}  // namespace distlock
