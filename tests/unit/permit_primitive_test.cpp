// The semaphore's PermitPrimitive without a server: how semaphore_release.lua's
// replies read as release.lua's (what the shared release path understands),
// what each kind of holder's release sends, and how a holder is renewed.
#include "sync/permit_primitive.hpp"

#include <gtest/gtest.h>

#include <utility>

#include "distlock/error.hpp"
#include "sync/release_call.hpp"

namespace distlock {
namespace {

using sync::PermitPrimitive;
using sync::ReleaseResult;
using Holder = PermitPrimitive::Holder;

ReleaseResult read(const PermitPrimitive& p, Value reply, std::error_code& ec) {
  return sync::release_result(p.release_reply(std::move(reply)), ec);
}

TEST(PermitPrimitive, AnyNumberGivenBackReadsAsReleased) {
  const PermitPrimitive p("s", Holder::permit);
  std::error_code ec;
  EXPECT_EQ(read(p, Value::integer(1), ec), ReleaseResult::released);
  EXPECT_EQ(read(p, Value::integer(2), ec), ReleaseResult::released) << "not a count mismatch";
  EXPECT_EQ(read(p, Value::integer(1000), ec), ReleaseResult::released);
  EXPECT_FALSE(ec);
}

TEST(PermitPrimitive, AHolderHoldingNothingReadsAsNotHeld) {
  const PermitPrimitive p("s", Holder::permit);
  std::error_code ec;
  EXPECT_EQ(read(p, Value::integer(-1), ec), ReleaseResult::not_held);
  EXPECT_FALSE(ec);
}

TEST(PermitPrimitive, AHolderHoldingFewerThanAskedReadsAsACountMismatch) {
  const PermitPrimitive p("s", Holder::client);
  std::error_code ec;
  EXPECT_EQ(read(p, Value::integer(-2), ec), ReleaseResult::mismatch);
  EXPECT_FALSE(ec);
}

TEST(PermitPrimitive, AnErrorReplyStaysAnError) {
  const PermitPrimitive p("s", Holder::permit);
  std::error_code ec;
  read(p, Value::error("WRONGTYPE Operation against a key"), ec);
  EXPECT_EQ(ec, errc::server_error);
  read(p, Value::bulk_string("1"), ec);
  EXPECT_EQ(ec, errc::protocol_error);
}

TEST(PermitPrimitive, APermitsReleaseOfAnyCountGivesBackAllAndRetiresTheHolder) {
  const PermitPrimitive p("s", Holder::permit);
  using Sent = std::pair<std::string_view, std::string_view>;
  EXPECT_EQ(p.release_count("1"), Sent("0", "1"));
  EXPECT_EQ(p.release_count("0"), Sent("0", "1"));
  EXPECT_EQ(p.release_count("7"), Sent("0", "1"));
}

TEST(PermitPrimitive, TheClientHoldersReleaseGivesBackTheCountAndZeroRetiresIt) {
  const PermitPrimitive p("s", Holder::client);
  using Sent = std::pair<std::string_view, std::string_view>;
  EXPECT_EQ(p.release_count("3"), Sent("3", "0"));
  EXPECT_EQ(p.release_count("0"), Sent("0", "1"));
}

TEST(PermitPrimitive, AHolderIsRenewedByItsLeaseInTheLeasesZset) {
  const PermitPrimitive p("job", Holder::permit);
  const auto r = p.renewal("holder-1");
  EXPECT_EQ(r.kind, runtime::Renewal::Kind::permit_holder);
  EXPECT_EQ(r.key, "distlock_sem_holders:{job}");
  EXPECT_EQ(r.member, "holder-1");
  EXPECT_TRUE(r.key2.empty());
  EXPECT_EQ(p.route_key(), "job");
  EXPECT_FALSE(p.reentrant());
}

TEST(PermitPrimitive, ABadNameIsRefusedAsASemaphoreName) {
  try {
    PermitPrimitive p("", Holder::permit);
    FAIL() << "an empty name was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("semaphore name is empty"), std::string::npos);
  }
}

}  // namespace
}  // namespace distlock
