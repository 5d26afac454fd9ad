#include "redlock_history.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <utility>

#include "latency.hpp"

namespace distlock_bench {

std::vector<Record> read_records(const std::string& path) {
  std::vector<Record> out;
  std::ifstream in(path);
  Record r;
  while (in >> r.proc >> r.thread >> r.call_ns >> r.acquire_ns >> r.release_call_ns >>
         r.release_return_ns) {
    out.push_back(r);
  }
  return out;
}

void write_records(const std::string& path, const std::vector<std::vector<Record>>& parts) {
  std::ofstream out(path);
  for (const auto& part : parts) {
    for (const auto& r : part) {
      out << r.proc << ' ' << r.thread << ' ' << r.call_ns << ' ' << r.acquire_ns << ' '
          << r.release_call_ns << ' ' << r.release_return_ns << '\n';
    }
  }
}

double jain_fairness(const std::vector<Record>& h, int threads_total) {
  std::map<std::pair<int, int>, double> per_thread;
  for (const auto& r : h) per_thread[{r.proc, r.thread}] += 1;
  double sum = 0;
  double sum_sq = 0;
  for (const auto& [who, n] : per_thread) {
    sum += n;
    sum_sq += n * n;
  }
  // Threads that never got the lock count as zeros.
  return sum_sq > 0 ? sum * sum / (threads_total * sum_sq) : 0;
}

// Fills `line` with the figures of a merged history (see the top comment).
void history_figures(std::vector<Record>& h, int threads_total, JsonLine& line) {
  std::sort(h.begin(), h.end(),
            [](const Record& a, const Record& b) { return a.acquire_ns < b.acquire_ns; });
  std::vector<std::int64_t> handoff, after_return, to_other, wait;
  std::int64_t same_thread = 0, same_proc = 0, overlaps = 0;
  // earliest[i]: the earliest acquire call among acquisitions i, i+1, ...
  std::vector<std::int64_t> earliest(h.size() + 1, std::numeric_limits<std::int64_t>::max());
  for (std::size_t i = h.size(); i-- > 0;) earliest[i] = std::min(h[i].call_ns, earliest[i + 1]);
  for (std::size_t i = 0; i < h.size(); ++i) {
    wait.push_back(h[i].acquire_ns - h[i].call_ns);
    if (i + 1 == h.size()) break;
    const Record& prev = h[i];
    const Record& next = h[i + 1];
    if (next.acquire_ns < prev.release_call_ns) ++overlaps;
    if (earliest[i + 1] < prev.release_call_ns) {
      handoff.push_back(next.acquire_ns - prev.release_call_ns);
      after_return.push_back(next.acquire_ns - prev.release_return_ns);
      if (next.proc == prev.proc && next.thread == prev.thread) {
        ++same_thread;
      } else {
        to_other.push_back(next.acquire_ns - prev.release_call_ns);
      }
      if (next.proc == prev.proc) ++same_proc;
    }
  }
  const double span =
      h.empty() ? 0 : static_cast<double>(h.back().release_return_ns - h.front().call_ns) / 1e9;
  const auto handoffs = static_cast<double>(handoff.size());
  line.add("acquisitions", static_cast<std::int64_t>(h.size()))
      .add("acquisitions_per_s", span > 0 ? static_cast<double>(h.size()) / span : 0.0)
      .add("handoffs", static_cast<std::int64_t>(handoff.size()))
      .add("barging_share", handoffs > 0 ? static_cast<double>(same_thread) / handoffs : 0.0)
      .add("same_process_share", handoffs > 0 ? static_cast<double>(same_proc) / handoffs : 0.0)
      .add("jain_fairness", jain_fairness(h, threads_total))
      .add("overlaps", overlaps);
  add_latency(line, "handoff", summarize(handoff));
  add_latency(line, "handoff_after_return", summarize(after_return));
  line.add("handoffs_to_other", static_cast<std::int64_t>(to_other.size()));
  add_latency(line, "handoff_to_other", summarize(to_other));
  add_latency(line, "wait", summarize(wait));
}

}  // namespace distlock_bench
