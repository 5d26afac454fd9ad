// The bad-input table's rows for MultiLock (docs/reliability.md, "## Bad
// input"): each bad call is rejected before anything is sent, or reports
// not_owner and changes nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include "distlock/multi_lock.hpp"
#include "integration/bad_input.hpp"

namespace distlock::bad_input {
namespace {

MultiLock two_parts(Client& c) {
  return MultiLock({c.lock("ml-a"), c.lock("ml-b")});
}

std::error_code unlock_from_other_thread(Env& env) {
  Client c(env.options());
  MultiLock multi = two_parts(c);
  multi.lock();
  const std::error_code ec = env.unchanged([&] {
    return std::async(std::launch::async,
                      [&] {
                        std::error_code e;
                        multi.unlock(e);
                        return e;
                      })
        .get();
  });
  multi.unlock();
  return ec;
}

CheckMap multi_lock_checks() {
  return {
      {"multi_lock.parts_empty", on_client([](Client&) { MultiLock multi({}); })},
      {"multi_lock.part_twice",
       [](Env& env) {
         Client first(env.options());
         Client second(env.options());
         return env.unchanged([&] { MultiLock multi({first.lock("x"), second.lock("x")}); });
       }},
      {"multi_lock.lease_zero", on_client([](Client& c) { two_parts(c).lock(0ms); })},
      {"multi_lock.lease_negative_ec", on_client([](Client& c) {
         std::error_code ec;
         two_parts(c).lock(-5ms, ec);
         return ec;
       })},
      {"multi_lock.wait_negative", on_client([](Client& c) { two_parts(c).try_lock_for(-1ms); })},
      {"multi_lock.wait_negative_ec", on_client([](Client& c) {
         std::error_code ec;
         two_parts(c).try_lock_for(-1ms, std::nullopt, ec);
         return ec;
       })},
      {"multi_lock.try_lease_zero",
       on_client([](Client& c) { two_parts(c).try_lock_for(10ms, 0ms); })},
      {"multi_lock.unlock_not_held", on_client([](Client& c) {
         std::error_code ec;
         two_parts(c).unlock(ec);
         return ec;
       })},
      {"multi_lock.unlock_other_thread", unlock_from_other_thread},
  };
}

const bool registered = register_checks(&multi_lock_checks);

// Whether /etc/hosts maps localhost to 127.0.0.1 (so the test does not
// depend on DNS).
bool localhost_is_loopback() {
  std::ifstream hosts("/etc/hosts");
  std::string line;
  while (std::getline(hosts, line)) {
    std::istringstream fields(line.substr(0, line.find('#')));
    std::string word;
    if (!(fields >> word) || word != "127.0.0.1") continue;
    while (fields >> word) {
      if (word == "localhost") return true;
    }
  }
  return false;
}

// The same bad input as multi_lock.part_twice, with the one server named two
// ways: the duplicate check compares resolved addresses, not host text.
TEST(MultiLockBadInput, OneLockOnOneServerNamedLocalhostAndLoopbackIsListedTwice) {
  if (!localhost_is_loopback()) GTEST_SKIP() << "/etc/hosts does not map localhost to 127.0.0.1";
  Env env;
  ClientOptions by_name = env.options();
  by_name.host = "localhost";
  ClientOptions by_address = env.options();
  ASSERT_EQ(by_address.host, "127.0.0.1");
  Client first(by_name);
  Client second(by_address);
  const std::error_code ec = env.unchanged([&] {
    MultiLock multi({first.lock("x"), second.lock("x")});
  });
  EXPECT_EQ(ec, errc::invalid_argument);
  EXPECT_TRUE(env.changes.empty()) << env.changes.front();
  // Two names on that one server are two locks.
  EXPECT_NO_THROW(MultiLock({first.lock("x"), second.lock("y")}));
}

}  // namespace
}  // namespace distlock::bad_input
