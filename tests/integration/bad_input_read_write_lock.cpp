// The read-write lock's rows of the bad-input table (docs/reliability.md).
#include "bad_input.hpp"

namespace distlock::bad_input {
namespace {

std::error_code unlock_code(Client& c, bool shared) {
  std::error_code ec;
  ReadWriteLock rw = c.read_write_lock("rw-bad");
  if (shared) {
    rw.unlock_shared(ec);
  } else {
    rw.unlock(ec);
  }
  return ec;
}

CheckMap read_write_lock_checks() {
  return {
      {"read_write_lock.name_empty", on_client([](Client& c) { c.read_write_lock(""); })},
      {"read_write_lock.name_too_long",
       on_client([](Client& c) { c.read_write_lock(std::string(64 * 1024 + 1, 'x')); })},
      {"fenced_read_write_lock.name_empty",
       on_client([](Client& c) { c.fenced_read_write_lock(""); })},
      {"read_write_lock.moved_from_client", on_client([](Client& c) {
         Client moved = std::move(c);
         c.read_write_lock("x");
       })},
      {"read_write_lock.lease_zero",
       on_client([](Client& c) { c.read_write_lock("rw-bad").lock(0ms); })},
      {"read_write_lock.shared_lease_negative",
       on_client([](Client& c) { c.read_write_lock("rw-bad").lock_shared(-5ms); })},
      {"read_write_lock.wait_negative",
       on_client([](Client& c) { c.read_write_lock("rw-bad").try_lock_for(-1ms); })},
      {"read_write_lock.shared_wait_negative",
       on_client([](Client& c) { c.read_write_lock("rw-bad").try_lock_shared_for(-1ms); })},
      {"read_write_lock.shared_wait_lease_zero",
       on_client([](Client& c) { c.read_write_lock("rw-bad").try_lock_shared_for(1ms, 0ms); })},
      {"read_write_lock.unlock_not_held",
       on_client([](Client& c) { return unlock_code(c, false); })},
      {"read_write_lock.unlock_shared_not_held",
       on_client([](Client& c) { return unlock_code(c, true); })},
      {"read_write_lock.upgrade",
       on_client_after([](Client& c) { c.read_write_lock("rw-bad").lock_shared(); },
                       [](Client& c) { c.read_write_lock("rw-bad").lock(); })},
      {"read_write_lock.upgrade_try",
       on_client_after([](Client& c) { c.read_write_lock("rw-bad").lock_shared(); },
                       [](Client& c) { c.read_write_lock("rw-bad").try_lock_for(1s); })},
      {"read_write_lock.wrong_type",
       on_client_after(&set_a_string,
                       [](Client& c) { c.read_write_lock("a-string").lock_shared(); })},
      {"read_write_lock.after_close",
       on_closed_client([](Client& c) { c.read_write_lock("x").lock_shared(); })},
  };
}

const bool registered = register_checks(&read_write_lock_checks);

}  // namespace
}  // namespace distlock::bad_input
