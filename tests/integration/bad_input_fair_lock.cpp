// The fair lock's rows of the bad-input table (docs/reliability.md).
#include <future>

#include "bad_input.hpp"

namespace distlock::bad_input {
namespace {

CheckMap fair_lock_checks() {
  return {
      {"fair_lock.name_empty", on_client([](Client& c) { c.fair_lock(""); })},
      {"fair_lock.name_too_long",
       on_client([](Client& c) { c.fair_lock(std::string(64 * 1024 + 1, 'x')); })},
      {"fenced_fair_lock.name_empty", on_client([](Client& c) { c.fenced_fair_lock(""); })},
      {"fair_lock.lease_zero", on_client([](Client& c) { c.fair_lock("bad").lock(0ms); })},
      {"fair_lock.lease_negative", on_client([](Client& c) { c.fair_lock("bad").lock(-5ms); })},
      {"fair_try_lock_for.wait_negative",
       on_client([](Client& c) { c.fair_lock("bad").try_lock_for(-1ms); })},
      {"fair_try_lock_for.lease_zero",
       on_client([](Client& c) { c.fair_lock("bad").try_lock_for(1s, 0ms); })},
      {"fair_try_acquire_for.wait_negative",
       on_client([](Client& c) { c.fair_lock("bad").try_acquire_for(-1ms); })},
      {"fair_unlock.not_held", on_client([](Client& c) {
         std::error_code ec;
         c.fair_lock("never-locked").unlock(ec);
         return ec;
       })},
      {"fair_unlock.other_thread",
       [](Env& env) {
         Client c(env.options());
         Lock lock = c.fair_lock("held-here");
         lock.lock();
         const auto ec = env.unchanged([&] {
           return std::async(std::launch::async,
                             [&] {
                               std::error_code e;
                               lock.unlock(e);
                               return e;
                             })
               .get();
         });
         lock.unlock();
         return ec;
       }},
  };
}

const bool registered = register_checks(&fair_lock_checks);

}  // namespace
}  // namespace distlock::bad_input
