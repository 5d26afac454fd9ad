// The fault tests' own helpers, where a bug would hang or blind a fault test.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <stop_token>
#include <thread>

#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

// Under load a lease can be lost before the test starts waiting for it
// (ServerRestart hung so, once in a full ctest -j2 run).
TEST(FaultSupport, WaitForStopOnATokenAlreadyRequestedReturnsTrue) {
  std::stop_source source;
  source.request_stop();
  auto result = std::make_shared<std::promise<bool>>();
  auto returned = result->get_future();
  // Detached: if the wait deadlocks, the test fails instead of hanging.
  std::thread([result, token = source.get_token()] {
    result->set_value(wait_for_stop(token, 10s));
  }).detach();
  ASSERT_EQ(returned.wait_for(30s), std::future_status::ready) << "wait_for_stop deadlocked";
  EXPECT_TRUE(returned.get());
}

}  // namespace
}  // namespace distlock::fault
