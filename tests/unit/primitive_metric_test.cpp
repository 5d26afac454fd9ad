// Each lock-like Primitive names the metrics label its acquires and holds count
// under (Primitive::metric()); the shared holding code reads it from there.
#include <gtest/gtest.h>

#include <chrono>

#include "sync/fair_lock.hpp"
#include "sync/lock_keys.hpp"
#include "sync/read_write_lock_sides.hpp"
#include "sync/simple_lock_primitive.hpp"

namespace distlock::sync {
namespace {

TEST(PrimitiveMetric, EachLockKindCountsUnderItsOwnPrimitiveLabel) {
  EXPECT_EQ(to_string(LockKeys("n", false).metric()), "lock");
  EXPECT_EQ(to_string(LockKeys("n", true).metric()), "lock");
  EXPECT_EQ(to_string(FairPrimitive("n", false).metric()), "fair_lock");
  EXPECT_EQ(to_string(ReadSide("n").metric()), "read_lock");
  EXPECT_EQ(to_string(WriteSide("n", false).metric()), "write_lock");
  EXPECT_EQ(to_string(SimplePrimitive("n", false, std::chrono::milliseconds(200),
                                      std::chrono::milliseconds(0))
                          .metric()),
            "simple_lock");
}

TEST(PrimitiveMetric, EveryLabelKeepsItsPublishedName) {
  const char* const names[kMetricPrimitives] = {"lock",       "fair_lock",    "read_lock",
                                                "write_lock", "simple_lock",  "semaphore",
                                                "latch",      "rate_limiter", "redlock"};
  for (std::size_t p = 0; p < kMetricPrimitives; ++p) {
    EXPECT_EQ(to_string(static_cast<MetricPrimitive>(p)), names[p]) << p;
  }
}

}  // namespace
}  // namespace distlock::sync
