// Lock-delay's rows of the bad-input table (docs/reliability.md): every
// factory that takes LockOptions, given a delay out of range, throws
// invalid_argument before any I/O.
#include <string>

#include "integration/bad_input.hpp"

namespace distlock::bad_input {
namespace {

const LockOptions kNegative{-1ms};
const LockOptions kADay{std::chrono::milliseconds(std::chrono::hours(24))};

CheckMap lock_delay_checks() {
  return {
      {"lock.lock_delay_negative", on_client([](Client& c) { c.lock("d", kNegative); })},
      {"lock.lock_delay_a_day", on_client([](Client& c) { c.lock("d", kADay); })},
      {"fenced_lock.lock_delay_negative",
       on_client([](Client& c) { c.fenced_lock("d", kNegative); })},
      {"fair_lock.lock_delay_negative", on_client([](Client& c) { c.fair_lock("d", kNegative); })},
      {"fenced_fair_lock.lock_delay_a_day",
       on_client([](Client& c) { c.fenced_fair_lock("d", kADay); })},
      {"simple_lock.lock_delay_negative",
       on_client([](Client& c) { c.simple_lock("d", kNegative); })},
      {"fenced_simple_lock.lock_delay_a_day",
       on_client([](Client& c) { c.fenced_simple_lock("d", kADay); })},
      {"read_write_lock.lock_delay_negative",
       on_client([](Client& c) { c.read_write_lock("d", kNegative); })},
      {"fenced_read_write_lock.lock_delay_a_day",
       on_client([](Client& c) { c.fenced_read_write_lock("d", kADay); })},
  };
}

const bool registered = register_checks(&lock_delay_checks);

}  // namespace
}  // namespace distlock::bad_input
