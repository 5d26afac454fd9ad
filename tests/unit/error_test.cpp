#include <gtest/gtest.h>

#include "distlock/error.hpp"

namespace distlock {
namespace {

TEST(Error, CarriesItsCodeInTheDistlockCategoryAndItsMessage) {
  const Error e(errc::invalid_argument, "lock name is empty");
  EXPECT_EQ(e.code(), make_error_code(errc::invalid_argument));
  EXPECT_STREQ(e.code().category().name(), "distlock");
  EXPECT_NE(std::string(e.what()).find("lock name is empty"), std::string::npos);
}

TEST(Error, ErrcComparesEqualToItsErrorCode) {
  std::error_code ec = errc::timeout;
  EXPECT_EQ(ec, errc::timeout);
  EXPECT_NE(ec, errc::closed);
  EXPECT_EQ(ec.message(), "timed out");
}

}  // namespace
}  // namespace distlock
