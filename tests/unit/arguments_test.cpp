// The argument checks every primitive shares (sync/arguments.hpp).
#include "sync/arguments.hpp"

#include <gtest/gtest.h>

#include <string>

namespace distlock::sync {
namespace {

using namespace std::chrono_literals;

TEST(Arguments, AWaitOfZeroAndAPositiveLeaseHaveNoProblem) {
  EXPECT_EQ(wait_lease_problem(0ms, 1ms), "");
  EXPECT_EQ(wait_lease_problem(std::nullopt, std::nullopt), "");
}

TEST(Arguments, ANegativeWaitIsNamedWithItsValue) {
  EXPECT_EQ(wait_lease_problem(-5ms), "wait must not be negative, got -5 ms");
}

TEST(Arguments, ALeaseOfZeroIsNamedWithItsValue) {
  EXPECT_EQ(wait_lease_problem(std::nullopt, 0ms), "lease must be positive, got 0 ms");
}

TEST(Arguments, WhenBothAreWrongTheWaitIsNamed) {
  EXPECT_EQ(wait_lease_problem(-1ms, -1ms), "wait must not be negative, got -1 ms");
}

TEST(Arguments, TheThrowingCheckPrefixesTheProblemWithItsCaller) {
  try {
    check_lease(-2ms, "MultiLock: ");
    FAIL() << "a negative lease must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("MultiLock: lease must be positive, got -2 ms"),
              std::string::npos);
  }
}

TEST(Arguments, RejectedSetsInvalidArgumentForABadLeaseAndClearsItOtherwise) {
  std::error_code ec = errc::timeout;
  EXPECT_FALSE(rejected(10ms, 10ms, ec));
  EXPECT_FALSE(ec);
  EXPECT_TRUE(rejected(10ms, 0ms, ec));
  EXPECT_EQ(ec, errc::invalid_argument);
}

TEST(Arguments, ANameIsRefusedWhenEmptyOrLongerThan64KiB) {
  EXPECT_THROW(validate_name("", "latch"), Error);
  EXPECT_NO_THROW(validate_name(std::string(65536, 'n'), "latch"));
  EXPECT_THROW(validate_name(std::string(65537, 'n'), "latch"), Error);
}

TEST(Arguments, AWaitTooLongForTheClockHasNoDeadline) {
  EXPECT_EQ(deadline_after(std::chrono::milliseconds::max()), std::nullopt);
  EXPECT_EQ(deadline_after(std::nullopt), std::nullopt);
  const auto before = Clock::now();
  const auto d = deadline_after(50ms);
  ASSERT_TRUE(d.has_value());
  EXPECT_GE(*d, before + 50ms);
}

}  // namespace
}  // namespace distlock::sync
