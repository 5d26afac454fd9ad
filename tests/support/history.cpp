#include "support/history.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <tuple>
#include <unordered_map>

namespace distlock::test {
namespace {

constexpr std::string_view kHeader = "distlock-history 1\n";
constexpr std::size_t kWriteThreshold = 1 << 20;

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Bytes outside '!'..'~' and '%' become %XX, so a name is one field without
// spaces or newlines.
void append_name(std::string& out, std::string_view name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < '!' || byte > '~' || c == '%') {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
}

template <typename Int>
void append_number(std::string& out, Int value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, end);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::optional<std::string> decode_name(std::string_view text) {
  std::string name;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      name += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_digit(text[i + 1]);
    const int low = hex_digit(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    name += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return name;
}

template <typename Int>
bool parse_number(std::string_view text, Int& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

// Parses one line (without its '\n'); returns nullopt if it is malformed.
std::optional<HoldRecord> parse_record(std::string_view line) {
  std::string_view fields[7];
  std::size_t count = 0;
  while (count < 7) {
    const std::size_t space = line.find(' ');
    fields[count++] = line.substr(0, space);
    if (space == std::string_view::npos) {
      line = {};
      break;
    }
    line.remove_prefix(space + 1);
  }
  if (count != 7 || !line.empty()) return std::nullopt;
  std::optional<std::string> name = decode_name(fields[0]);
  if (!name) return std::nullopt;
  HoldRecord record;
  record.name = std::move(*name);
  std::uint64_t token = 0;
  if (!parse_number(fields[1], record.process) || !parse_number(fields[2], record.thread) ||
      !parse_number(fields[3], record.enter_ns) || !parse_number(fields[4], record.exit_ns) ||
      !parse_number(fields[6], record.lease_deadline_ns)) {
    return std::nullopt;
  }
  if (fields[5] != "-") {
    if (!parse_number(fields[5], token)) return std::nullopt;
    record.fencing_token = token;
  }
  return record;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_errno("cannot open history " + path.string());
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw_errno("cannot read history " + path.string());
  return std::move(contents).str();
}

}  // namespace

std::int64_t steady_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::int64_t steady_now_ns() {
  return steady_ns(std::chrono::steady_clock::now());
}

std::string to_string(const HoldRecord& record) {
  std::string out = "'";
  append_name(out, record.name);
  out += "' process " + std::to_string(record.process) + " thread " +
         std::to_string(record.thread) + ": enter " + std::to_string(record.enter_ns) + " exit " +
         std::to_string(record.exit_ns);
  out += record.lease_deadline_ns == std::numeric_limits<std::int64_t>::max()
             ? std::string(" no lease")
             : " lease deadline " + std::to_string(record.lease_deadline_ns);
  out += record.fencing_token ? " fencing token " + std::to_string(*record.fencing_token)
                              : std::string(" no token");
  return out;
}

HistoryWriter::HistoryWriter(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno("cannot create history " + path_.string());
  buffer_ = kHeader;
  try {
    std::lock_guard lock(mutex_);
    write_buffer_locked();
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

HistoryWriter::~HistoryWriter() {
  try {
    close();
  } catch (const std::exception&) {
    // The destructor must not throw; close() reports the error to callers
    // that care.
  }
}

void HistoryWriter::append(const HoldRecord& record) {
  // Formatted outside the lock, so recording threads only serialize on the
  // copy into the buffer.
  std::string line;
  line.reserve(record.name.size() + 96);
  append_name(line, record.name);
  line += ' ';
  append_number(line, record.process);
  line += ' ';
  append_number(line, record.thread);
  line += ' ';
  append_number(line, record.enter_ns);
  line += ' ';
  append_number(line, record.exit_ns);
  line += ' ';
  if (record.fencing_token) {
    append_number(line, *record.fencing_token);
  } else {
    line += '-';
  }
  line += ' ';
  append_number(line, record.lease_deadline_ns);
  line += '\n';

  std::lock_guard lock(mutex_);
  if (fd_ < 0) throw std::logic_error("HistoryWriter::append after close: " + path_.string());
  buffer_ += line;
  if (buffer_.size() >= kWriteThreshold) write_buffer_locked();
}

void HistoryWriter::flush() {
  std::lock_guard lock(mutex_);
  if (fd_ < 0) throw std::logic_error("HistoryWriter::flush after close: " + path_.string());
  write_buffer_locked();
}

void HistoryWriter::close() {
  std::lock_guard lock(mutex_);
  if (fd_ < 0) return;
  std::string error;
  try {
    write_buffer_locked();
  } catch (const std::system_error& e) {
    error = e.what();
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && error.empty()) throw_errno("cannot close history " + path_.string());
  if (!error.empty()) throw std::system_error(std::make_error_code(std::errc::io_error), error);
}

// On failure the bytes already written leave the buffer, so a retry does not
// write them twice.
void HistoryWriter::write_buffer_locked() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t written = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (written < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      buffer_.erase(0, done);
      throw std::system_error(error, std::generic_category(),
                              "cannot write history " + path_.string());
    }
    done += static_cast<std::size_t>(written);
  }
  buffer_.clear();
}

std::vector<HoldRecord> read_history(const std::vector<std::filesystem::path>& files) {
  std::vector<HoldRecord> records;
  for (const std::filesystem::path& path : files) {
    const std::string contents = read_file(path);
    if (!std::string_view(contents).starts_with(kHeader)) {
      throw std::runtime_error(path.string() + ":1: not a distlock history (expected first line '" +
                               std::string(kHeader.substr(0, kHeader.size() - 1)) + "')");
    }
    std::string_view rest = std::string_view(contents).substr(kHeader.size());
    for (std::size_t line_number = 2; !rest.empty(); ++line_number) {
      const std::size_t newline = rest.find('\n');
      const auto where = [&] { return path.string() + ":" + std::to_string(line_number); };
      if (newline == std::string_view::npos) {
        throw std::runtime_error(where() + ": truncated record (no end of line)");
      }
      std::optional<HoldRecord> record = parse_record(rest.substr(0, newline));
      if (!record) throw std::runtime_error(where() + ": malformed record");
      records.push_back(std::move(*record));
      rest.remove_prefix(newline + 1);
    }
  }
  return records;
}

namespace {

// The end of the time a holder was inside while believing its lease valid.
std::int64_t effective_end(const HoldRecord& record) {
  return std::min(record.exit_ns, record.lease_deadline_ns);
}

// Whether a holder's lease ended before it entered: it never believed itself
// valid inside.
bool lease_ended_before_entering(const HoldRecord& record) {
  return record.enter_ns > effective_end(record);
}

// Why a record cannot be used, or nullptr.
const char* invalid_reason(const HoldRecord& record) {
  if (record.exit_ns < record.enter_ns) return "exit before enter";
  if (record.lease_deadline_ns <= 0) return "no lease deadline recorded";
  return nullptr;
}

template <typename T>
void add_listed(std::vector<T>& list, std::size_t& count, T&& entry) {
  ++count;
  if (list.size() < CheckResult::kMaxListed) list.push_back(std::forward<T>(entry));
}

// Fencing tokens must strictly increase in the order holders entered. Each
// token is compared with the greatest one before it, so one stale token is
// one violation, and so is every token after it that is not above the
// greatest. A holder whose lease ended before it entered is not held to this:
// it held nothing, and when two acquires are answered together after a pause
// their threads may enter in either order (the server still issued the
// tokens in order; fencing is what rejects the stale one's writes). Its
// token still counts towards the greatest: a holder that entered after it
// believing its lease valid, with a lower token, was granted before it by a
// server that had already let the lock go.
void check_fencing(const std::vector<HoldRecord>& records,
                   const std::vector<std::size_t>& in_order,
                   CheckResult& result) {
  const HoldRecord* greatest = nullptr;
  for (const std::size_t index : in_order) {
    const HoldRecord& record = records[index];
    if (!record.fencing_token) continue;
    const bool stale = greatest != nullptr && *record.fencing_token <= *greatest->fencing_token;
    if (stale && lease_ended_before_entering(record)) continue;
    if (stale) {
      add_listed(result.fencing_violations, result.fencing_violation_count,
                 std::pair(*greatest, record));
    } else {
      greatest = &record;
    }
  }
}

// With the holders whose effective interval is not empty sorted by enter, the
// ones overlapping holder i among those after it are exactly those that
// entered at or before its effective end: a contiguous run found by binary
// search, so counting is O(n log n) however many overlaps there are.
void check_overlaps(const std::vector<HoldRecord>& records,
                    const std::vector<std::size_t>& in_order,
                    CheckResult& result) {
  std::vector<std::size_t> live;
  std::vector<std::int64_t> enters;
  for (const std::size_t index : in_order) {
    const HoldRecord& record = records[index];
    if (invalid_reason(record) != nullptr) continue;  // counted by the caller
    if (lease_ended_before_entering(record)) {
      add_listed(result.excluded_records, result.excluded_record_count, HoldRecord(record));
      continue;
    }
    live.push_back(index);
    enters.push_back(record.enter_ns);
  }
  for (std::size_t i = 0; i < live.size(); ++i) {
    const HoldRecord& first = records[live[i]];
    const auto after = enters.begin() + static_cast<std::ptrdiff_t>(i + 1);
    const auto last = std::upper_bound(after, enters.end(), effective_end(first));
    const auto count = static_cast<std::size_t>(last - after);
    for (std::size_t j = i + 1; j <= i + count && result.overlaps.size() < CheckResult::kMaxListed;
         ++j) {
      result.overlaps.emplace_back(first, records[live[j]]);
    }
    result.overlap_count += count;
  }
}

}  // namespace

CheckResult check_mutual_exclusion(std::vector<HoldRecord> records) {
  CheckResult result;
  result.operations_checked = records.size();
  // Grouping by hash keeps the sort on integers; names are compared only to
  // order the groups, so the report does not depend on hash order.
  std::unordered_map<std::string_view, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const HoldRecord& record = records[i];
    if (invalid_reason(record) != nullptr) {
      add_listed(result.invalid_records, result.invalid_record_count, HoldRecord(record));
    }
    by_name[record.name].push_back(i);
  }
  std::vector<std::string_view> names;
  names.reserve(by_name.size());
  for (const auto& entry : by_name) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  result.names_checked = names.size();

  // Entry order; the other keys only make it total (a lower token first when
  // two holders entered in the same nanosecond), so results are repeatable.
  const auto entered_before = [&records](std::size_t a, std::size_t b) {
    const HoldRecord& x = records[a];
    const HoldRecord& y = records[b];
    return std::tie(x.enter_ns, x.fencing_token, x.process, x.thread, x.exit_ns, a) <
           std::tie(y.enter_ns, y.fencing_token, y.process, y.thread, y.exit_ns, b);
  };
  for (const std::string_view name : names) {
    std::vector<std::size_t>& in_order = by_name[name];
    std::sort(in_order.begin(), in_order.end(), entered_before);
    check_fencing(records, in_order, result);
    check_overlaps(records, in_order, result);
  }
  return result;
}

std::string CheckResult::report() const {
  std::string out =
      "mutual exclusion: " + std::to_string(operations_checked) + " operations on " +
      std::to_string(names_checked) + " names checked: " + std::to_string(overlap_count) +
      " overlaps, " + std::to_string(fencing_violation_count) + " fencing violations, " +
      std::to_string(invalid_record_count) + " invalid records, " +
      std::to_string(excluded_record_count) + " excluded (lease ended before entering)\n";
  if (operations_checked > 0 &&
      excluded_record_count + invalid_record_count >= operations_checked) {
    out += "nothing checked: every record was excluded or invalid\n";
  }
  for (const auto& [first, second] : overlaps) {
    const std::int64_t both_inside = std::min(effective_end(first), effective_end(second)) -
                                     std::max(first.enter_ns, second.enter_ns);
    out += "overlap: both inside, leases valid, for " + std::to_string(both_inside) + " ns\n";
    out += "  first:  " + to_string(first) + "\n";
    out += "  second: " + to_string(second) + "\n";
  }
  for (const auto& [earlier, later] : fencing_violations) {
    out += "fencing token did not increase:\n";
    out += "  earlier: " + to_string(earlier) + "\n";
    out += "  later:   " + to_string(later) + "\n";
  }
  for (const HoldRecord& record : invalid_records) {
    out +=
        std::string("invalid record (") + invalid_reason(record) + "): " + to_string(record) + "\n";
  }
  for (const HoldRecord& record : excluded_records) {
    out += "excluded (lease ended before entering): " + to_string(record) + "\n";
  }
  const auto not_listed = [&out](std::size_t count, std::size_t listed, const char* what) {
    if (count > listed) {
      out += "(" + std::to_string(count - listed) + " more " + what + " not listed)\n";
    }
  };
  not_listed(overlap_count, overlaps.size(), "overlaps");
  not_listed(fencing_violation_count, fencing_violations.size(), "fencing violations");
  not_listed(invalid_record_count, invalid_records.size(), "invalid records");
  not_listed(excluded_record_count, excluded_records.size(), "excluded records");
  return out;
}

}  // namespace distlock::test
