#include "support/history.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "support/process.hpp"

namespace distlock::test {
namespace {

HoldRecord hold(std::string name,
                int process,
                std::int64_t enter,
                std::int64_t exit,
                std::optional<std::uint64_t> token = std::nullopt) {
  HoldRecord record;
  record.name = std::move(name);
  record.process = process;
  record.thread = 1;
  record.enter_ns = enter;
  record.exit_ns = exit;
  record.fencing_token = token;
  return record;
}

// Removes its directory (made by make_temp_dir) when the test ends.
class TempDir {
 public:
  TempDir() : path_(make_temp_dir("distlock-history-")) {}
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

TEST(History, CleanHistoryPasses) {
  const CheckResult result = check_mutual_exclusion({
      hold("a", 1, 100, 200, 1),
      hold("a", 2, 201, 300, 2),
      hold("b", 1, 150, 250),  // another name may be held at the same time
      hold("a", 1, 400, 500, 3),
  });
  EXPECT_TRUE(result.ok()) << result.report();
  EXPECT_EQ(result.operations_checked, 4u);
  EXPECT_EQ(result.names_checked, 2u);
  EXPECT_EQ(result.overlap_count, 0u);
  EXPECT_NE(result.report().find("4 operations on 2 names checked: 0 overlaps"), std::string::npos)
      << result.report();
}

TEST(History, PlantedOverlapIsReportedWithBothRecords) {
  const HoldRecord first = hold("a", 1, 100, 300);
  const HoldRecord second = hold("a", 2, 250, 400);
  // Given out of order: the checker sorts by enter.
  const CheckResult result =
      check_mutual_exclusion({hold("a", 3, 500, 600), second, hold("a", 4, 10, 20), first});
  EXPECT_FALSE(result.ok());
  ASSERT_EQ(result.overlap_count, 1u) << result.report();
  ASSERT_EQ(result.overlaps.size(), 1u);
  EXPECT_EQ(result.overlaps[0].first, first);
  EXPECT_EQ(result.overlaps[0].second, second);
  const std::string report = result.report();
  EXPECT_NE(report.find(to_string(first)), std::string::npos) << report;
  EXPECT_NE(report.find(to_string(second)), std::string::npos) << report;
  EXPECT_NE(report.find("for 50 ns"), std::string::npos) << report;
}

TEST(History, EveryOverlappingPairIsReported) {
  // One long holder overlaps three short ones that do not overlap each other.
  const CheckResult result = check_mutual_exclusion({
      hold("a", 1, 0, 1000),
      hold("a", 2, 100, 200),
      hold("a", 3, 300, 400),
      hold("a", 4, 500, 600),
  });
  ASSERT_EQ(result.overlap_count, 3u) << result.report();
  for (const auto& [first, second] : result.overlaps) EXPECT_EQ(first.process, 1);
}

TEST(History, TouchingIntervalsCountAsOverlapBecauseIntervalsAreClosed) {
  const CheckResult result =
      check_mutual_exclusion({hold("a", 1, 100, 200), hold("a", 2, 200, 300)});
  EXPECT_EQ(result.overlap_count, 1u) << result.report();
}

TEST(History, OverlapAfterTheFirstHoldersLeaseExpiredPasses) {
  // Process 1 stayed inside until 500, but its lease ran out at 300: from then
  // on it no longer believed it held the lock, and process 2 entered at 350.
  HoldRecord expired = hold("a", 1, 100, 500, 7);
  expired.lease_deadline_ns = 300;
  HoldRecord next = hold("a", 2, 350, 600, 8);
  next.lease_deadline_ns = 10'000;
  const CheckResult result = check_mutual_exclusion({expired, next});
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(History, OverlapWhileBothLeasesWereValidFails) {
  HoldRecord first = hold("a", 1, 100, 500);
  first.lease_deadline_ns = 400;
  const HoldRecord second = hold("a", 2, 350, 600);
  const CheckResult result = check_mutual_exclusion({first, second});
  EXPECT_EQ(result.overlap_count, 1u) << result.report();
}

TEST(History, HolderWhoseLeaseEndedBeforeItEnteredOverlapsNothingAndIsCountedAsExcluded) {
  HoldRecord stale = hold("a", 1, 100, 500);
  stale.lease_deadline_ns = 50;
  const CheckResult result = check_mutual_exclusion({stale, hold("a", 2, 200, 300)});
  EXPECT_EQ(result.overlap_count, 0u) << result.report();
  EXPECT_TRUE(result.ok()) << result.report();
  ASSERT_EQ(result.excluded_record_count, 1u) << result.report();
  EXPECT_EQ(result.excluded_records[0], stale);
  const std::string report = result.report();
  EXPECT_NE(report.find("1 excluded (lease ended before entering)"), std::string::npos) << report;
  EXPECT_NE(report.find("excluded (lease ended before entering): " + to_string(stale)),
            std::string::npos)
      << report;
}

TEST(History, HistoryWhoseEveryRecordIsExcludedFailsBecauseNothingWasChecked) {
  // Both inside together; were their leases not already over, this would be
  // an overlap. A recorder that wrote deadlines too early would hide it.
  HoldRecord first = hold("a", 1, 100, 500);
  first.lease_deadline_ns = 90;
  HoldRecord second = hold("a", 2, 200, 600);
  second.lease_deadline_ns = 150;
  const CheckResult result = check_mutual_exclusion({first, second});
  EXPECT_EQ(result.overlap_count, 0u) << result.report();
  EXPECT_EQ(result.excluded_record_count, 2u) << result.report();
  EXPECT_FALSE(result.ok()) << result.report();
  EXPECT_NE(result.report().find("nothing checked"), std::string::npos) << result.report();
}

TEST(History, RecordWithNoLeaseDeadlineIsInvalidAndFailsTheCheck) {
  // What a recorder writes for a lease whose deadline it could not read: 0.
  // Taken as a deadline, it would drop the record out of the overlap check
  // and hide its overlap with the other holder.
  HoldRecord missing = hold("a", 1, 100, 500);
  missing.lease_deadline_ns = 0;
  const CheckResult result = check_mutual_exclusion({missing, hold("a", 2, 200, 300)});
  EXPECT_FALSE(result.ok());
  ASSERT_EQ(result.invalid_record_count, 1u) << result.report();
  EXPECT_EQ(result.invalid_records[0], missing);
  EXPECT_EQ(result.excluded_record_count, 0u) << "an invalid record is not merely excluded";
  EXPECT_NE(result.report().find("invalid record (no lease deadline recorded)"), std::string::npos)
      << result.report();
}

TEST(History, NonIncreasingFencingTokensAreFlagged) {
  const HoldRecord five = hold("a", 1, 100, 200, 5);
  const HoldRecord three = hold("a", 2, 300, 400, 3);
  const HoldRecord also_five = hold("a", 3, 500, 600, 5);
  const CheckResult result = check_mutual_exclusion({
      five, three, also_five, hold("a", 4, 700, 800),      // no token: skipped
      hold("a", 5, 900, 1000, 6), hold("b", 1, 0, 10, 1),  // tokens are compared per name only
  });
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.overlap_count, 0u);
  ASSERT_EQ(result.fencing_violation_count, 2u) << result.report();
  EXPECT_EQ(result.fencing_violations[0], std::pair(five, three));
  EXPECT_EQ(result.fencing_violations[1], std::pair(five, also_five));
  EXPECT_NE(result.report().find("fencing token did not increase"), std::string::npos);
}

TEST(History, LowerTokenOfAHolderWhoseLeaseEndedBeforeItEnteredIsNoFencingViolation) {
  // Two acquires answered together after a server pause, both past their
  // deadlines: the server issued 29 then 30, the threads entered the other
  // way round. Neither held anything.
  HoldRecord thirty = hold("a", 1, 1000, 1100, 30);
  thirty.lease_deadline_ns = 500;
  HoldRecord twenty_nine = hold("a", 1, 1001, 1200, 29);
  twenty_nine.lease_deadline_ns = 400;
  twenty_nine.thread = 2;
  const CheckResult result =
      check_mutual_exclusion({thirty, twenty_nine, hold("a", 2, 1300, 1400, 31)});
  EXPECT_EQ(result.fencing_violation_count, 0u) << result.report();
  EXPECT_EQ(result.excluded_record_count, 2u) << result.report();
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(History, ValidHolderEnteringAfterAHigherTokenFailsEvenIfThatHoldersLeaseHadEnded) {
  // 31 was granted after 30, so the server had let 30's lock go before 30's
  // holder entered believing its lease valid.
  HoldRecord thirty_one = hold("a", 1, 1000, 1100, 31);
  thirty_one.lease_deadline_ns = 500;
  const HoldRecord thirty = hold("a", 2, 1200, 1300, 30);
  const CheckResult result = check_mutual_exclusion({thirty_one, thirty});
  ASSERT_EQ(result.fencing_violation_count, 1u) << result.report();
  EXPECT_EQ(result.fencing_violations[0], std::pair(thirty_one, thirty));
  EXPECT_FALSE(result.ok());
}

TEST(History, RecordWithExitBeforeEnterIsInvalid) {
  const CheckResult result = check_mutual_exclusion({hold("a", 1, 200, 100)});
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.invalid_record_count, 1u) << result.report();
  EXPECT_NE(result.report().find("invalid record (exit before enter)"), std::string::npos)
      << result.report();
}

TEST(History, RecordsRoundTripThroughWriterAndReader) {
  TempDir dir;
  HoldRecord odd_name = hold("lock with spaces\n%and\xff bytes", -3, -5, 9'000'000'000'000, 0);
  odd_name.thread = 42;
  odd_name.lease_deadline_ns = 123;
  HoldRecord max_token = hold("a", 1, 1, 2, UINT64_MAX);
  const std::vector<HoldRecord> first_file = {odd_name, max_token, hold("", 2, 3, 4)};
  const std::vector<HoldRecord> second_file = {hold("c", 7, 10, 20, 99)};
  {
    HistoryWriter writer(dir.file("p1"));
    for (const HoldRecord& r : first_file) writer.append(r);
    writer.close();
  }
  {
    HistoryWriter writer(dir.file("p2"));  // closed by its destructor
    for (const HoldRecord& r : second_file) writer.append(r);
  }
  std::vector<HoldRecord> expected = first_file;
  expected.insert(expected.end(), second_file.begin(), second_file.end());
  EXPECT_EQ(read_history({dir.file("p1"), dir.file("p2")}), expected);
}

TEST(History, WriterIsThreadSafe) {
  TempDir dir;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20'000;
  {
    HistoryWriter writer(dir.file("h"));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&writer, t] {
        for (int i = 0; i < kPerThread; ++i) {
          HoldRecord record = hold("name-" + std::to_string(t), 1, 2 * i, 2 * i + 1);
          record.thread = t;
          writer.append(record);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  const std::vector<HoldRecord> records = read_history({dir.file("h")});
  ASSERT_EQ(records.size(), std::size_t{kThreads} * kPerThread);
  // Whole lines only, and each thread's records in the order it appended them.
  std::vector<std::int64_t> next_enter(kThreads, 0);
  for (const HoldRecord& record : records) {
    ASSERT_EQ(record.name, "name-" + std::to_string(record.thread));
    ASSERT_EQ(record.enter_ns, next_enter[static_cast<std::size_t>(record.thread)]);
    next_enter[static_cast<std::size_t>(record.thread)] += 2;
  }
  const CheckResult result = check_mutual_exclusion(records);
  EXPECT_TRUE(result.ok()) << result.report();
}

TEST(History, ReaderRejectsMalformedAndTruncatedFiles) {
  TempDir dir;
  const auto write = [&dir](const std::string& name, const std::string& contents) {
    std::ofstream(dir.file(name), std::ios::binary) << contents;
    return dir.file(name);
  };
  EXPECT_THROW(read_history({write("no_header", "a 1 1 1 2 - 3\n")}), std::runtime_error);
  EXPECT_THROW(read_history({write("bad_field", "distlock-history 1\na 1 1 x 2 - 3\n")}),
               std::runtime_error);
  EXPECT_THROW(read_history({write("truncated", "distlock-history 1\na 1 1 1 2 - 3")}),
               std::runtime_error);
  EXPECT_THROW(read_history({dir.file("missing")}), std::system_error);
}

TEST(History, MillionRecordsAreChecked) {
  constexpr std::size_t kRecords = 1'000'000;
  constexpr std::size_t kNames = 16;
  std::vector<HoldRecord> records;
  records.reserve(kRecords);
  // Back-to-back holds with a 1 ns gap, interleaved across names, in
  // reverse order so the checker has to sort.
  for (std::size_t i = kRecords; i-- > 0;) {
    const auto slot = static_cast<std::int64_t>(i / kNames);
    records.push_back(hold("lock-" + std::to_string(i % kNames), static_cast<int>(i % 7), slot * 10,
                           slot * 10 + 9, static_cast<std::uint64_t>(slot + 1)));
  }
  records.push_back(hold("lock-0", 99, 15, 25));  // one planted overlap
  const CheckResult result = check_mutual_exclusion(std::move(records));
  EXPECT_EQ(result.operations_checked, kRecords + 1);
  EXPECT_EQ(result.names_checked, kNames);
  EXPECT_EQ(result.overlap_count, 2u) << result.report();  // with [10,19] and [20,29]
  EXPECT_EQ(result.fencing_violation_count, 0u);
}

}  // namespace
}  // namespace distlock::test
