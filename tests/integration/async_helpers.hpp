// Helpers the synchronizers' async tests share (synchronizer_async_test.cpp,
// semaphore_async_test.cpp).
#pragma once

#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <system_error>

#include "client_impl.hpp"
#include "distlock/distlock.hpp"
#include "runtime/watchdog.hpp"
#include "sync/latch_recheck.hpp"

namespace distlock::test {

// Connections subscribed to `channel`.
inline long long subscribers(Client& client, const std::string& channel) {
  return client.command("PUBSUB", "NUMSUB", channel).as_array()[1].as_integer();
}

// Renewals the Client's watchdog still has scheduled.
inline std::size_t renewals(Client& client) {
  return distlock::detail::Access::impl(client)->watchdog().size();
}

// The threads of this process now.
inline long threads_now() {
  long n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// The error a use_future future ended with (none when it holds a value).
template <class T>
std::error_code error_of(std::future<T>& f) {
  try {
    f.get();
  } catch (const std::system_error& e) {
    return e.code();
  }
  return {};
}

// While alive, latch waiters re-read the count only every 10 minutes, far
// beyond any bound in the tests: a waiter seen woken was woken by the
// message, by construction, not by the periodic re-read.
class NoLatchRecheck {
 public:
  NoLatchRecheck() : before_(sync::latch_recheck()) {
    sync::set_latch_recheck(std::chrono::minutes(10));
  }
  ~NoLatchRecheck() { sync::set_latch_recheck(before_); }
  NoLatchRecheck(const NoLatchRecheck&) = delete;
  NoLatchRecheck& operator=(const NoLatchRecheck&) = delete;

 private:
  std::chrono::milliseconds before_;
};

}  // namespace distlock::test
