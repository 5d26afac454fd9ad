// The async forms' rows of the bad-input table (docs/reliability.md): the
// Semaphore, Latch and RateLimiter async entry points (issue 12) given bad
// values complete their handler with the error, before any I/O, and change
// nothing on the server.
#include <asio/use_future.hpp>
#include <chrono>
#include <future>
#include <system_error>

#include "distlock/distlock.hpp"
#include "integration/bad_input.hpp"

namespace distlock::bad_input {
namespace {

using namespace std::chrono_literals;

// The error a use_future operation completed with (none: success).
template <class Future>
std::error_code outcome(Future future) {
  if (future.wait_for(30s) != std::future_status::ready) return errc::timeout;
  try {
    future.get();
  } catch (const std::system_error& e) {
    return e.code();
  }
  return {};
}

CheckMap synchronizer_async_checks() {
  return {
      // Issue 13's replica acknowledgement options, here for want of a file.
      {"options.min_replicas_acked_negative",
       constructing([](ClientOptions& o) { o.min_replicas_acked = -1; })},
      {"options.replica_ack_timeout_not_below_command_timeout", constructing([](ClientOptions& o) {
         o.min_replicas_acked = 1;
         o.replica_ack_timeout = o.command_timeout;
       })},
      {"semaphore.async_acquire_zero", on_client([](Client& c) {
         return outcome(c.semaphore("bad").async_acquire(0, asio::use_future));
       })},
      {"semaphore.async_try_acquire_for_wait_negative", on_client([](Client& c) {
         return outcome(c.semaphore("bad").async_try_acquire_for(1, -1ms, asio::use_future));
       })},
      {"semaphore.async_acquire_permit_lease_zero", on_client([](Client& c) {
         return outcome(c.semaphore("bad").async_acquire_permit(1, 0ms, asio::use_future));
       })},
      {"semaphore.async_try_acquire_permit_negative", on_client([](Client& c) {
         return outcome(c.semaphore("bad").async_try_acquire_permit(-1, 1s, asio::use_future));
       })},
      {"latch.async_wait_for_negative", on_client([](Client& c) {
         return outcome(c.latch("bad").async_wait_for(-1ms, asio::use_future));
       })},
      {"rate_limiter.async_acquire_zero", on_client([](Client& c) {
         return outcome(c.rate_limiter("bad").async_acquire(0, asio::use_future));
       })},
      {"rate_limiter.async_acquire_no_rate", on_client([](Client& c) {
         return outcome(c.rate_limiter("unset").async_acquire(1, asio::use_future));
       })},
      {"rate_limiter.async_try_acquire_for_over_rate",
       on_client_after([](Client& c) { c.rate_limiter("rated").try_set_rate(5, 1s); },
                       [](Client& c) {
                         return outcome(c.rate_limiter("rated").async_try_acquire_for(
                             6, 1s, asio::use_future));
                       })},
  };
}

const bool registered = register_checks(&synchronizer_async_checks);

}  // namespace
}  // namespace distlock::bad_input
