// The history of a contended run: one record per acquisition, written by
// each process and merged after the run, and the figures read from it
// (handoff, barging, fairness, overlaps). Definitions: the top comment of
// redlock_contended.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "json_line.hpp"

namespace distlock_bench {

struct Record {
  int proc = 0;
  int thread = 0;
  std::int64_t call_ns = 0;            // acquire called
  std::int64_t acquire_ns = 0;         // acquire returned, held
  std::int64_t release_call_ns = 0;    // release called
  std::int64_t release_return_ns = 0;  // release returned
};

std::vector<Record> read_records(const std::string& path);
void write_records(const std::string& path, const std::vector<std::vector<Record>>& parts);
// Jain's fairness index of acquisitions per thread (threads that never got
// the lock count as zeros).
double jain_fairness(const std::vector<Record>& h, int threads_total);
// Sorts `h` by acquire return and fills `line` with its figures.
void history_figures(std::vector<Record>& h, int threads_total, JsonLine& line);

}  // namespace distlock_bench
