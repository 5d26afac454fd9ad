// RedlockGroup::metrics() (issue 14): a RedlockGroup has no Client, so it
// counts its own acquires, holds, extensions and losses under
// MetricPrimitive::redlock, against five real masters.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include "distlock/distlock.hpp"
#include "integration/redlock_masters.hpp"
#include "support/test_helpers.hpp"
#include "unit/prometheus_parser.hpp"

namespace distlock::redlock_test {
namespace {

using test::eventually;
using Labels = std::map<std::string, std::string>;

std::uint64_t acquires(const MetricsSnapshot& s, AcquireResult r) {
  return s.of(MetricPrimitive::redlock).acquires_of(r);
}

TEST(RedlockMetrics, CountsAfterAScriptedWorkloadAreExactlyWhatHappened) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  RedlockGroup other(m.uris(), quick());
  RedlockLock a = group.lock("rlm:a");
  a.lock();
  EXPECT_EQ(group.metrics().held_now, 1);
  a.unlock();
  RedlockLease held = group.lock("rlm:b").acquire();
  EXPECT_FALSE(other.lock("rlm:b").try_acquire().has_value());  // one attempt: not contended
  EXPECT_FALSE(other.lock("rlm:b").try_acquire_for(100ms).has_value());  // retried: contended
  held.release();

  const MetricsSnapshot s = group.metrics();
  EXPECT_EQ(acquires(s, AcquireResult::acquired), 2u);
  EXPECT_EQ(acquires(s, AcquireResult::not_acquired), 0u);
  EXPECT_EQ(s.of(MetricPrimitive::redlock).contended, 0u);
  EXPECT_EQ(s.of(MetricPrimitive::redlock).wait.count, 2u);
  EXPECT_EQ(s.of(MetricPrimitive::redlock).hold.count, 2u);
  EXPECT_EQ(s.held_now, 0);
  EXPECT_EQ(s.leases_lost, (std::array<std::uint64_t, 3>{0, 0, 0}));
  EXPECT_EQ(s.of(MetricPrimitive::lock).wait.count, 0u) << "nothing under another primitive";
  EXPECT_TRUE(s.client_id.empty());

  const MetricsSnapshot o = other.metrics();
  EXPECT_EQ(acquires(o, AcquireResult::acquired), 0u);
  EXPECT_EQ(acquires(o, AcquireResult::not_acquired), 2u);
  EXPECT_EQ(o.of(MetricPrimitive::redlock).contended, 1u);
  EXPECT_EQ(o.of(MetricPrimitive::redlock).hold.count, 0u);

  const auto text = test::parse_prometheus(prometheus_text(s));
  EXPECT_EQ(text.value("distlock_acquires_total",
                       Labels{{"primitive", "redlock"}, {"outcome", "acquired"}}),
            2);
  EXPECT_EQ(text.value("distlock_hold_seconds_count", Labels{{"primitive", "redlock"}}), 2);
}

TEST(RedlockMetrics, ExtensionsAreCountedAsRenewals) {
  Masters m;
  RedlockGroup group(m.uris(), quick(600ms));
  RedlockLease held = group.lock("rlm:ext").acquire();
  ASSERT_TRUE(eventually([&] { return group.metrics().renewals_ok >= 2; }, 20s))
      << "the watchdog extends every lease / 3";
  EXPECT_TRUE(held.valid());
  EXPECT_EQ(group.metrics().renewals_failed, 0u);
  held.release();
}

TEST(RedlockMetrics, ClosingTheGroupWhileItHoldsLeavesNothingHeldAndCountsTheLoss) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  RedlockLease held = group.lock("rlm:close").acquire();
  ASSERT_EQ(group.metrics().held_now, 1);
  group.close();
  const MetricsSnapshot s = group.metrics();
  EXPECT_EQ(s.held_now, 0);
  const auto closed = static_cast<std::size_t>(LeaseLostEvent::Reason::client_closed);
  EXPECT_EQ(s.leases_lost[closed], 1u);
  EXPECT_EQ(acquires(group.metrics(), AcquireResult::acquired), 1u);
}

TEST(RedlockMetrics, AnAcquireOnAClosedGroupCountsAsFailed) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  group.close();
  std::error_code ec;
  EXPECT_FALSE(group.lock("rlm:closed").try_acquire(ec).has_value());
  EXPECT_EQ(ec, errc::closed);
  EXPECT_EQ(acquires(group.metrics(), AcquireResult::failed), 1u);
}

TEST(RedlockMetrics, AMetricsServerServesAGroupsMetricsOverHttp) {
  Masters m;
  RedlockGroup group(m.uris(), quick());
  group.lock("rlm:http").acquire().release();
  MetricsServer http(group, "127.0.0.1", 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(http.port()) + "/metrics";
  std::string body;
  FILE* pipe = popen(("curl -s --max-time 10 " + url).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::array<char, 4096> buf{};
  for (std::size_t n = 0; (n = fread(buf.data(), 1, buf.size(), pipe)) > 0;)
    body.append(buf.data(), n);
  pclose(pipe);
  const auto text = test::parse_prometheus(body);
  EXPECT_EQ(text.value("distlock_acquires_total",
                       Labels{{"primitive", "redlock"}, {"outcome", "acquired"}}),
            1);
}

}  // namespace
}  // namespace distlock::redlock_test
