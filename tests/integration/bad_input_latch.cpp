// The countdown latch's rows of the bad-input table (docs/reliability.md):
// every entry point of Latch given bad values, each rejected with a clear
// Error and without changing the server's data.
#include <string>

#include "integration/bad_input.hpp"

namespace distlock::bad_input {
namespace {

CheckMap latch_checks() {
  return {
      {"latch.name_empty", on_client([](Client& c) { c.latch(""); })},
      {"latch.name_too_long",
       on_client([](Client& c) { c.latch(std::string(64 * 1024 + 1, 'x')); })},
      {"latch.moved_from_client", on_client([](Client& c) {
         Client taker = std::move(c);
         c.latch("x");  // NOLINT(bugprone-use-after-move): the case under test
       })},
      {"latch.try_set_count_negative",
       on_client([](Client& c) { c.latch("bad").try_set_count(-1); })},
      {"latch.try_set_count_negative_ec", on_client([](Client& c) {
         std::error_code ec;
         c.latch("bad").try_set_count(-5, ec);
         return ec;
       })},
      {"latch.wait_for_negative", on_client([](Client& c) { c.latch("bad").wait_for(-1ms); })},
      {"latch.wait_for_negative_ec", on_client([](Client& c) {
         std::error_code ec;
         c.latch("bad").wait_for(-1ms, ec);
         return ec;
       })},
      {"latch.count_down_unset", on_client([](Client& c) { c.latch("never-set").count_down(); })},
      {"latch.wrong_type",
       on_client_after([](Client& c) { c.command("HSET", "latch-hash", "f", "v"); },
                       [](Client& c) { c.latch("latch-hash").count(); })},
      {"latch.after_close", on_closed_client([](Client& c) { c.latch("x").wait(); })},
  };
}

const bool registered = register_checks(&latch_checks);

}  // namespace
}  // namespace distlock::bad_input
