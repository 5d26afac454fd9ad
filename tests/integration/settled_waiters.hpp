// Waiting until waiters on a pub/sub channel have settled: subscribed, and
// each has made the attempt that follows its subscription. Only then is a
// wake-up test sharp: a release that lands before that attempt is found by
// the attempt itself, so the test would pass without any message.
#pragma once

#include <chrono>
#include <string>

#include "distlock/distlock.hpp"
#include "integration/async_helpers.hpp"
#include "support/test_helpers.hpp"

namespace distlock::test {

// True once `clients` connections are subscribed to `channel` and the server
// has run at least `attempts` scripts (EVALSHA) since `scripts_before`
// (evalsha_calls before the waiters started). Every waiter of the acquire
// loop makes one attempt before it subscribes and exactly one after its
// subscription is confirmed (or, joining a channel its Client has confirmed
// already, at once): `attempts` is 2 per waiter. From then on only a message
// or a fallback (which the caller makes longer than its bound) makes a
// waiter try again. Nothing else may run scripts meanwhile (a watchdog
// renewal counts too: give every Client a lease far beyond the bound).
inline bool waiters_settled(Client& admin,
                            const std::string& channel,
                            long long clients,
                            long long scripts_before,
                            long long attempts) {
  using namespace std::chrono_literals;
  return eventually([&] { return subscribers(admin, channel) == clients; }, 20s) &&
         eventually([&] { return evalsha_calls(admin) - scripts_before >= attempts; }, 20s);
}

}  // namespace distlock::test
