// Lock histories and the mutual-exclusion checker of the stress and fault
// tests.
//
// Every holder records one HoldRecord per critical section: when it entered
// and left, the fencing token it held and until when it believed its lease
// valid. Each process writes its records to its own file with a
// HistoryWriter; after the run read_history() merges the files and
// check_mutual_exclusion() proves that no two holders of one name were inside
// at the same time while both believed their lease valid, or reports every
// pair that was.
//
// All times are std::chrono::steady_clock in nanoseconds since its epoch
// (steady_now_ns, steady_ns). On Linux steady_clock is CLOCK_MONOTONIC, one
// clock for every process of a machine, so records of different processes
// compare.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace distlock::test {

// steady_clock::now() in nanoseconds.
std::int64_t steady_now_ns();
// A steady_clock time point (a Lease deadline, say) in nanoseconds.
std::int64_t steady_ns(std::chrono::steady_clock::time_point t);

// One stay of one holder inside the critical section of one lock.
struct HoldRecord {
  // The lock name. Any bytes.
  std::string name;
  // Who held it: any two numbers that tell holders apart, such as a process
  // index and a thread index. Only shown in reports.
  int process = 0;
  int thread = 0;
  // Read after the lock was acquired, as the critical section starts, and as
  // it ends, before the unlock is sent.
  std::int64_t enter_ns = 0;
  std::int64_t exit_ns = 0;
  // The lease's fencing token, when it has one.
  std::optional<std::uint64_t> fencing_token;
  // The end of the time the holder believed its lease valid: its last known
  // deadline (after renewals), or the moment it learnt the lease was lost if
  // that came first. Default: never (a lock without a lease).
  std::int64_t lease_deadline_ns = std::numeric_limits<std::int64_t>::max();

  friend bool operator==(const HoldRecord&, const HoldRecord&) = default;
};

// "'name' process P thread T: enter E exit X lease deadline D fencing token F"
// (name percent-encoded as in the file format; "no lease" / "no token" when
// absent), for reports and test messages.
std::string to_string(const HoldRecord& record);

// Appends HoldRecords to one file. Format: a first line "distlock-history 1",
// then one line per record:
//   <name> <process> <thread> <enter_ns> <exit_ns> <token or -> <deadline_ns>
// with the name percent-encoded (every byte outside '!'..'~', and '%').
//
// Records are buffered and written once 1 MiB is pending, on flush() and on
// close(); a process killed before then loses the ones not yet written, so a
// test that SIGKILLs a recording process must flush() before.
//
// Thread-safe: any thread may call any method. One writer per file.
class HistoryWriter {
 public:
  // Creates path, or truncates it, and writes the first line. Throws
  // std::system_error if the file cannot be created or written.
  explicit HistoryWriter(const std::filesystem::path& path);
  // Calls close() and ignores its errors; call close() to see them.
  ~HistoryWriter();

  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  // Queues one record; may write. Throws std::logic_error after close() and
  // std::system_error when a write fails.
  void append(const HoldRecord& record);
  // Writes every queued record. Throws like append.
  void flush();
  // Writes every queued record and closes the file. Throws std::system_error
  // when a write or the close fails (the file is closed anyway). Later calls
  // do nothing.
  void close();

 private:
  void write_buffer_locked();

  std::mutex mutex_;
  std::filesystem::path path_;
  int fd_ = -1;
  std::string buffer_;
};

// Reads and concatenates the records of files, in file order. Throws
// std::system_error if a file cannot be read, and std::runtime_error naming
// the file and line for a file that is not a history (wrong first line) or a
// malformed or truncated line.
std::vector<HoldRecord> read_history(const std::vector<std::filesystem::path>& files);

struct CheckResult {
  // The lists below keep their first kMaxListed entries; the counts are
  // exact.
  static constexpr std::size_t kMaxListed = 1000;

  // Every record given, and how many lock names they held.
  std::size_t operations_checked = 0;
  std::size_t names_checked = 0;
  // Pairs (first, second) of holders of one name that were inside at the same
  // time while both believed their lease valid; first entered first.
  std::vector<std::pair<HoldRecord, HoldRecord>> overlaps;
  std::size_t overlap_count = 0;
  // Pairs (earlier, later) of holders of one name with fencing tokens where
  // later entered after earlier (or at the same time) but its token is not
  // greater, and later's lease had not ended before it entered. earlier is
  // the holder of the greatest token seen so far, whatever its lease.
  std::vector<std::pair<HoldRecord, HoldRecord>> fencing_violations;
  std::size_t fencing_violation_count = 0;
  // Records that make the history unprovable, recorder bugs: exit_ns before
  // enter_ns, or a lease_deadline_ns of 0 or less (no deadline was recorded:
  // a real one is never at the clock's epoch, and a hold without a lease
  // says so with the default).
  std::vector<HoldRecord> invalid_records;
  std::size_t invalid_record_count = 0;
  // Valid records left out of the overlap check because their lease ended
  // before they entered (lease_deadline_ns < enter_ns): such a holder never
  // believed itself valid inside. Legitimate after a fault (an acquire
  // answered after its deadline), but a history where every record is
  // excluded proves nothing.
  std::vector<HoldRecord> excluded_records;
  std::size_t excluded_record_count = 0;

  // No overlap, no fencing violation, no invalid record, and, when any record
  // was given, at least one was checked for overlaps (not all excluded).
  bool ok() const {
    const bool something_checked =
        operations_checked == 0 ||
        excluded_record_count + invalid_record_count < operations_checked;
    return overlap_count == 0 && fencing_violation_count == 0 && invalid_record_count == 0 &&
           something_checked;
  }
  // One summary line with the counts, then one block per listed problem with
  // its records, then the listed excluded records.
  std::string report() const;
};

// Checks records, in any order, in O(n log n) time (plus the size of the
// lists). For each name, a record's effective interval is the closed interval
// [enter_ns, min(exit_ns, lease_deadline_ns)], empty when the lease ended
// before the holder entered (the record is then counted as excluded); two
// records overlap when their effective intervals share an instant. Invalid
// records are counted as such (not as excluded) and take no part in the
// overlap check. Also checks that, for each name, fencing tokens
// strictly increase in the order holders entered (records without a token are
// skipped, and so is a lower token of a holder whose lease ended before it
// entered: see fencing_violations).
CheckResult check_mutual_exclusion(std::vector<HoldRecord> records);

}  // namespace distlock::test
