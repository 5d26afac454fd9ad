// Bounded polling for the test fixtures that wait on server state (cluster
// and sentinel roles), where no event can be awaited from outside.
#pragma once

#include <chrono>
#include <exception>
#include <thread>

namespace distlock::test {

// Calls pred every 10 ms (each call typically spawns redis-cli, 3-5 ms) until
// it returns true (then returns true) or `deadline` passes (returns false).
// An exception from pred counts as "not yet": the sentinels' promotion sends
// CLIENT KILL TYPE normal to the promoted replica, which reset a poll's
// connection (seen under ctest -j3), and a node may die between a running()
// check and the poll. A failure that persists ends in the timeout.
template <class Pred>
bool poll_until(Pred pred, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    try {
      if (pred()) return true;
    } catch (const std::exception&) {
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace distlock::test
