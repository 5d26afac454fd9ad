// The semaphore's rows of the bad-input table (docs/reliability.md): every
// entry point of Semaphore and Permit (issue 12) given bad values, each
// rejected with a clear Error and without changing the server's data.
#include <string>

#include "integration/bad_input.hpp"

namespace distlock::bad_input {
namespace {

// The bad call f(Semaphore&) made while this Client holds 1 of the 2 permits
// of "sem-held" (setup); released after the comparison.
template <class F>
Check while_holding(F f) {
  return [f](Env& env) {
    Client c(env.options());
    Semaphore s = c.semaphore("sem-held");
    s.try_set_permits(2);
    s.acquire(1);
    const std::error_code ec = env.unchanged([&] { return f(s); });
    s.release(1);
    return ec;
  };
}

std::error_code release_held_by_other_client(Env& env) {
  Client holder(env.options());
  Client other(env.options());
  Semaphore held = holder.semaphore("sem-held");
  held.try_set_permits(2);
  held.acquire(2);
  const std::error_code ec = env.unchanged([&] {
    std::error_code e;
    other.semaphore("sem-held").release(1, e);
    return e;
  });
  held.release(2);
  return ec;
}

CheckMap semaphore_checks() {
  return {
      {"semaphore.name_empty", on_client([](Client& c) { c.semaphore(""); })},
      {"semaphore.name_too_long",
       on_client([](Client& c) { c.semaphore(std::string(64 * 1024 + 1, 'x')); })},
      {"semaphore.moved_from_client", on_client([](Client& c) {
         Client taker = std::move(c);
         c.semaphore("x");  // NOLINT(bugprone-use-after-move): the case under test
       })},
      {"semaphore.try_set_permits_negative",
       on_client([](Client& c) { c.semaphore("bad").try_set_permits(-1); })},
      {"semaphore.try_set_permits_negative_ec", on_client([](Client& c) {
         std::error_code ec;
         c.semaphore("bad").try_set_permits(-1, ec);
         return ec;
       })},
      {"semaphore.add_permits_zero",
       on_client([](Client& c) { c.semaphore("bad").add_permits(0); })},
      {"semaphore.acquire_zero", on_client([](Client& c) { c.semaphore("bad").acquire(0); })},
      {"semaphore.acquire_negative_ec", on_client([](Client& c) {
         std::error_code ec;
         c.semaphore("bad").acquire(-1, ec);
         return ec;
       })},
      {"semaphore.try_acquire_zero",
       on_client([](Client& c) { c.semaphore("bad").try_acquire(0); })},
      {"semaphore.try_acquire_for_negative",
       on_client([](Client& c) { c.semaphore("bad").try_acquire_for(-2, 1s); })},
      {"semaphore.try_acquire_for_wait_negative",
       on_client([](Client& c) { c.semaphore("bad").try_acquire_for(1, -1ms); })},
      {"semaphore.release_zero", while_holding([](Semaphore& s) { s.release(0); })},
      {"semaphore.release_more_than_held_ec", while_holding([](Semaphore& s) {
         std::error_code ec;
         s.release(2, ec);
         return ec;
       })},
      {"semaphore.release_never_acquired", on_client([](Client& c) {
         std::error_code ec;
         c.semaphore("never").release(1, ec);
         return ec;
       })},
      {"semaphore.release_other_client", release_held_by_other_client},
      {"semaphore.acquire_permit_zero",
       on_client([](Client& c) { c.semaphore("bad").acquire_permit(0); })},
      {"semaphore.acquire_permit_lease_zero",
       on_client([](Client& c) { c.semaphore("bad").acquire_permit(1, 0ms); })},
      {"semaphore.try_acquire_permit_negative",
       on_client([](Client& c) { c.semaphore("bad").try_acquire_permit(-1, 1s); })},
      {"semaphore.try_acquire_permit_wait_negative",
       on_client([](Client& c) { c.semaphore("bad").try_acquire_permit(1, -1ms); })},
      {"semaphore.after_close", on_closed_client([](Client& c) { c.semaphore("x").acquire(); })},
  };
}

const bool registered = register_checks(&semaphore_checks);

}  // namespace
}  // namespace distlock::bad_input
