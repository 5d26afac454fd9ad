// The simple lock's rows of the bad-input table (docs/reliability.md): every
// new entry point of SimpleLock given bad values, each rejected with a clear
// Error and without changing the server's data.
#include <string>
#include <thread>

#include "integration/bad_input.hpp"

namespace distlock::bad_input {
namespace {

// The bad call f(SimpleLock&) made while `l`, on the same Client, is held by
// this thread (setup); the hold is released after the comparison.
template <class F>
Check while_held_here(F f) {
  return [f](Env& env) {
    Client c(env.options());
    SimpleLock l = c.simple_lock("simple-held");
    l.lock();
    const std::error_code ec = env.unchanged([&] { return f(l); });
    l.unlock();
    return ec;
  };
}

std::error_code unlock_held_by_other_client(Env& env) {
  Client holder(env.options());
  Client other(env.options());
  SimpleLock held = holder.simple_lock("simple-held");
  held.lock();
  const std::error_code ec = env.unchanged([&] {
    std::error_code e;
    other.simple_lock("simple-held").unlock(e);
    return e;
  });
  held.unlock();
  return ec;
}

CheckMap simple_lock_checks() {
  return {
      {"simple_lock.name_empty", on_client([](Client& c) { c.simple_lock(""); })},
      {"simple_lock.name_too_long",
       on_client([](Client& c) { c.simple_lock(std::string(64 * 1024 + 1, 'x')); })},
      {"fenced_simple_lock.name_empty", on_client([](Client& c) { c.fenced_simple_lock(""); })},
      {"simple_lock.moved_from_client", on_client([](Client& c) {
         Client taker = std::move(c);
         c.simple_lock("x");  // NOLINT(bugprone-use-after-move): the case under test
       })},
      {"simple_lock.lease_zero", on_client([](Client& c) { c.simple_lock("bad").lock(0ms); })},
      {"simple_lock.lease_negative", on_client([](Client& c) { c.simple_lock("bad").lock(-5ms); })},
      {"simple_lock.lease_zero_ec", on_client([](Client& c) {
         std::error_code ec;
         c.simple_lock("bad").lock(0ms, ec);
         return ec;
       })},
      {"simple_lock.try_lock_for_wait_negative",
       on_client([](Client& c) { c.simple_lock("bad").try_lock_for(-1ms); })},
      {"simple_lock.try_lock_for_lease_zero",
       on_client([](Client& c) { c.simple_lock("bad").try_lock_for(1s, 0ms); })},
      {"simple_lock.try_acquire_for_wait_negative",
       on_client([](Client& c) { c.simple_lock("bad").try_acquire_for(-1ms); })},
      {"simple_lock.try_acquire_for_lease_negative", on_client([](Client& c) {
         std::error_code ec;
         c.simple_lock("bad").try_acquire_for(0ms, -1ms, ec);
         return ec;
       })},
      {"simple_lock.unlock_not_held", on_client([](Client& c) {
         std::error_code ec;
         c.simple_lock("never-locked").unlock(ec);
         return ec;
       })},
      {"simple_lock.unlock_other_client", unlock_held_by_other_client},
      {"simple_lock.lock_by_holder", while_held_here([](SimpleLock& l) { l.lock(); })},
      {"simple_lock.lock_lease_by_holder_ec", while_held_here([](SimpleLock& l) {
         std::error_code ec;
         l.lock(1s, ec);
         return ec;
       })},
      {"simple_lock.try_lock_by_holder", while_held_here([](SimpleLock& l) {
         return l.try_lock() ? make_error_code(errc::protocol_error) : std::error_code();
       })},
      {"simple_lock.after_close", on_closed_client([](Client& c) { c.simple_lock("x").lock(); })},
  };
}

const bool registered = register_checks(&simple_lock_checks);

}  // namespace
}  // namespace distlock::bad_input
