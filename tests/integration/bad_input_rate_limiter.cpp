// The rate limiter's rows of the bad-input table (docs/reliability.md): every
// entry point of RateLimiter given bad values, each rejected with a clear
// Error and without configuring or consuming anything on the server.
#include <string>

#include "integration/bad_input.hpp"

namespace distlock::bad_input {
namespace {

// A limiter "limited" with 2 permits per hour, set before the comparison.
void limited(Client& c) {
  c.rate_limiter("limited").try_set_rate(2, std::chrono::hours(1));
}

CheckMap rate_limiter_checks() {
  return {
      {"rate_limiter.name_empty", on_client([](Client& c) { c.rate_limiter(""); })},
      {"rate_limiter.name_too_long",
       on_client([](Client& c) { c.rate_limiter(std::string(64 * 1024 + 1, 'x')); })},
      {"rate_limiter.moved_from_client", on_client([](Client& c) {
         Client taker = std::move(c);
         c.rate_limiter("x");  // NOLINT(bugprone-use-after-move): the case under test
       })},
      {"rate_limiter.permits_zero",
       on_client([](Client& c) { c.rate_limiter("bad").try_set_rate(0, 1s); })},
      {"rate_limiter.permits_negative_ec", on_client([](Client& c) {
         std::error_code ec;
         c.rate_limiter("bad").try_set_rate(-1, 1s, ec);
         return ec;
       })},
      {"rate_limiter.interval_zero",
       on_client([](Client& c) { c.rate_limiter("bad").try_set_rate(1, 0ms); })},
      {"rate_limiter.interval_negative",
       on_client([](Client& c) { c.rate_limiter("bad").try_set_rate(1, -1000ms); })},
      {"rate_limiter.rate_too_large", on_client([](Client& c) {
         c.rate_limiter("bad").try_set_rate(std::int64_t{1} << 40, std::chrono::hours(24));
       })},
      {"rate_limiter.try_acquire_n_zero",
       on_client_after(limited, [](Client& c) { c.rate_limiter("limited").try_acquire(0); })},
      {"rate_limiter.try_acquire_n_negative_ec",
       on_client_after(limited,
                       [](Client& c) {
                         std::error_code ec;
                         c.rate_limiter("limited").try_acquire(-1, ec);
                         return ec;
                       })},
      {"rate_limiter.try_acquire_n_above_rate",
       on_client_after(limited, [](Client& c) { c.rate_limiter("limited").try_acquire(3); })},
      {"rate_limiter.acquire_n_above_rate",
       on_client_after(limited, [](Client& c) { c.rate_limiter("limited").acquire(3); })},
      {"rate_limiter.try_acquire_for_wait_negative",
       on_client_after(limited,
                       [](Client& c) { c.rate_limiter("limited").try_acquire_for(1, -1ms); })},
      {"rate_limiter.try_acquire_for_n_zero_ec",
       on_client_after(limited,
                       [](Client& c) {
                         std::error_code ec;
                         c.rate_limiter("limited").try_acquire_for(0, 1s, ec);
                         return ec;
                       })},
      {"rate_limiter.try_acquire_no_rate",
       on_client([](Client& c) { c.rate_limiter("unset").try_acquire(); })},
      {"rate_limiter.acquire_no_rate",
       on_client([](Client& c) { c.rate_limiter("unset").acquire(); })},
      {"rate_limiter.available_permits_no_rate",
       on_client([](Client& c) { c.rate_limiter("unset").available_permits(); })},
      {"rate_limiter.after_close",
       on_closed_client([](Client& c) { c.rate_limiter("x").acquire(); })},
  };
}

const bool registered = register_checks(&rate_limiter_checks);

}  // namespace
}  // namespace distlock::bad_input
