// prometheus_text and the histogram behind it, checked with the strict
// exposition-format parser in prometheus_parser.hpp.
#include <gtest/gtest.h>

#include <chrono>

#include "distlock/error.hpp"
#include "distlock/metrics.hpp"
#include "runtime/metrics.hpp"
#include "unit/prometheus_parser.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::parse_prometheus;

using Labels = std::map<std::string, std::string>;

TEST(PrometheusText, AnEmptySnapshotParsesAndHasEveryFamilyWithHelpAndType) {
  const auto parsed = parse_prometheus(prometheus_text(MetricsSnapshot{}));
  const std::map<std::string, std::string> expected = {
      {"distlock_acquires_total", "counter"},
      {"distlock_acquires_contended_total", "counter"},
      {"distlock_acquire_wait_seconds", "histogram"},
      {"distlock_hold_seconds", "histogram"},
      {"distlock_renewals_total", "counter"},
      {"distlock_leases_lost_total", "counter"},
      {"distlock_reconnects_total", "counter"},
      {"distlock_script_batch_size", "histogram"},
      {"distlock_commands_in_flight", "gauge"},
      {"distlock_held", "gauge"}};
  ASSERT_EQ(parsed.families.size(), expected.size());
  for (const auto& [name, type] : expected) {
    ASSERT_TRUE(parsed.families.count(name)) << name;
    EXPECT_EQ(parsed.families.at(name).type, type) << name;
  }
}

TEST(PrometheusText, CountersAndGaugesCarryTheirLabelsAndValues) {
  MetricsSnapshot s;
  s.primitives[static_cast<std::size_t>(MetricPrimitive::semaphore)]
      .acquires[static_cast<std::size_t>(AcquireResult::not_acquired)] = 7;
  s.primitives[static_cast<std::size_t>(MetricPrimitive::fair_lock)].contended = 2;
  s.leases_lost[static_cast<std::size_t>(LeaseLostEvent::Reason::taken)] = 4;
  s.renewals_failed = 9;
  s.held_now = 3;
  const auto p = parse_prometheus(prometheus_text(s));
  EXPECT_EQ(p.value("distlock_acquires_total",
                    Labels{{"primitive", "semaphore"}, {"outcome", "not_acquired"}}),
            7);
  EXPECT_EQ(p.value("distlock_acquires_total",
                    Labels{{"primitive", "semaphore"}, {"outcome", "acquired"}}),
            0);
  EXPECT_EQ(p.value("distlock_acquires_contended_total", Labels{{"primitive", "fair_lock"}}), 2);
  EXPECT_EQ(p.value("distlock_leases_lost_total", Labels{{"reason", "taken"}}), 4);
  EXPECT_EQ(p.value("distlock_renewals_total", Labels{{"outcome", "failed"}}), 9);
  EXPECT_EQ(p.value("distlock_held", Labels{}), 3);
}

TEST(PrometheusText, HistogramObservationsLandInCumulativeBucketsWithBoundsInclusive) {
  runtime::AtomicHistogram h;
  h.observe(1ms);     // exactly on the 0.001 bound: counted there
  h.observe(1500us);  // 0.0025
  h.observe(20s);     // 30
  h.observe(1h);      // +Inf only
  const HistogramSnapshot snap = h.snapshot();
  MetricsSnapshot s;
  s.primitives[0].hold = snap;
  const auto p = parse_prometheus(prometheus_text(s));
  auto bucket = [&](const std::string& le) {
    return p.value("distlock_hold_seconds_bucket", Labels{{"primitive", "lock"}, {"le", le}});
  };
  EXPECT_EQ(bucket("0.0005"), 0);
  EXPECT_EQ(bucket("0.001"), 1);
  EXPECT_EQ(bucket("0.0025"), 2);
  EXPECT_EQ(bucket("10"), 2);
  EXPECT_EQ(bucket("30"), 3);
  EXPECT_EQ(bucket("300"), 3);
  EXPECT_EQ(bucket("+Inf"), 4);
  EXPECT_EQ(p.value("distlock_hold_seconds_count", Labels{{"primitive", "lock"}}), 4);
  EXPECT_DOUBLE_EQ(p.value("distlock_hold_seconds_sum", Labels{{"primitive", "lock"}}),
                   0.001 + 0.0015 + 20 + 3600);
}

TEST(PrometheusText, BatchSizesLandInCumulativeBucketsWithCallsAsCountAndOperationsAsSum) {
  runtime::Metrics m;
  m.script_call(1);    // a call alone: le="1"
  m.script_call(2);    // exactly on the bound 2
  m.script_call(3);    // le="4"
  m.script_call(300);  // +Inf only
  const auto p = parse_prometheus(prometheus_text(m.snapshot()));
  auto bucket = [&](const std::string& le) {
    return p.value("distlock_script_batch_size_bucket", Labels{{"le", le}});
  };
  EXPECT_EQ(bucket("1"), 1);
  EXPECT_EQ(bucket("2"), 2);
  EXPECT_EQ(bucket("4"), 3);
  EXPECT_EQ(bucket("256"), 3);
  EXPECT_EQ(bucket("+Inf"), 4);
  EXPECT_EQ(p.value("distlock_script_batch_size_count", Labels{}), 4);
  EXPECT_EQ(p.value("distlock_script_batch_size_sum", Labels{}), 306);
}

TEST(PrometheusText, ConstantLabelValuesAreEscapedAndParseBackUnchanged) {
  MetricsSnapshot s;
  s.client_id = "id-1";
  PrometheusOptions o;
  o.client_id_label = true;
  o.labels = {{"service", "a\"b\\c\nd"}};
  const std::string text = prometheus_text(s, o);
  EXPECT_NE(text.find(R"(service="a\"b\\c\nd")"), std::string::npos) << text.substr(0, 400);
  const auto p = parse_prometheus(text);
  for (const auto& [name, family] : p.families) {
    for (const auto& sample : family.samples) {
      EXPECT_EQ(sample.labels.at("client"), "id-1") << sample.name;
      EXPECT_EQ(sample.labels.at("service"), "a\"b\\c\nd") << sample.name;
    }
  }
}

TEST(PrometheusText, AnInvalidConstantLabelNameIsRejectedWithInvalidArgument) {
  for (const std::string bad : {"", "1x", "a-b", "__reserved", "le"}) {
    PrometheusOptions o;
    o.labels = {{bad, "v"}};
    try {
      (void)prometheus_text(MetricsSnapshot{}, o);
      ADD_FAILURE() << "accepted label name '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument);
    }
  }
}

// The parser itself must be strict, or the tests above prove little.
TEST(PrometheusParser, RejectsWhatTheFormatOrAHistogramDoesNotAllow) {
  const std::string head = "# HELP h_seconds x\n# TYPE h_seconds histogram\n";
  const std::vector<std::string> bad = {
      "# HELP c_total x\n# TYPE c_total counter\nc_total 1",               // no final line feed
      "# HELP c x\n# TYPE c counter\nc 1\n",                               // counter without _total
      "# HELP c_total x\n# TYPE c_total counter\nc_total{a=\"\\q\"} 1\n",  // bad escape
      "# HELP c_total x\n# TYPE c_total counter\nc_total{a=\"1\"} 1\nc_total{a=\"1\"} 2\n",
      "# TYPE c_total counter\nc_total 1\n",  // no HELP
      "x_total 1\n",                          // no TYPE
      head +
          "h_seconds_bucket{le=\"1\"} 2\nh_seconds_bucket{le=\"+Inf\"} 1\n"
          "h_seconds_sum 1\nh_seconds_count 1\n",  // not cumulative
      head + "h_seconds_bucket{le=\"1\"} 1\nh_seconds_sum 1\nh_seconds_count 1\n",  // no +Inf
      head + "h_seconds_bucket{le=\"+Inf\"} 2\nh_seconds_sum 1\nh_seconds_count 1\n",
  };
  for (const auto& text : bad) {
    EXPECT_THROW(parse_prometheus(text), std::runtime_error) << text;
  }
  EXPECT_NO_THROW(parse_prometheus(head +
                                   "h_seconds_bucket{le=\"1\"} 1\nh_seconds_bucket{le=\"+Inf\"} 2\n"
                                   "h_seconds_sum 1.5\nh_seconds_count 2\n"));
}

}  // namespace
}  // namespace distlock
