// The measurement loops of backends_bench, written once for every backend:
// each takes a MakeLock (how a thread makes its distlock::Lock on a name)
// and knows nothing of the server behind it.
#pragma once
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "distlock/lock.hpp"

namespace distlock::bench {

using MakeLock = std::function<distlock::Lock(const std::string& name)>;

// The warm-up (uncounted) and the measured window every loop runs.
struct LoopSettings {
  double warmup = 2;
  double seconds = 5;
  long session_ms = 10'000;  // the lease a killed holder leaves behind
};

struct Throughput {
  double pairs_per_s = -1;  // -1: failed
  double p50_us = 0;
  double p99_us = 0;
  long pairs = 0;
  long warmup_pairs = 0;
  // ZooKeeper: the requests the servers received per pair (-1: not counted).
  double requests_per_pair = -1;
};

struct Handoff {
  double p50_us = 0;
  double p99_us = 0;
  long pairs = 0;  // acquisitions
  double pairs_per_s = -1;
  long handoffs = 0;  // acquisitions from another thread's release
};

struct Death {
  double ms = -1;       // kill -> next holder; -1: not measured
  double held_ms = -1;  // how long the holder had held before the kill
  std::string error;
};

// `threads` threads, each on its own name (prefix + index), loop lock();
// unlock() for the warm-up and then the window; samples the lock() call.
// A pair counts when it started inside the window; the rate divides by the
// time from the window's start until every thread stopped. Never throws: a
// failed run has pairs_per_s -1 (the error is printed on stderr).
Throughput uncontended(const MakeLock& make,
                       int threads,
                       const LoopSettings& s,
                       const std::string& prefix);

// `threads` threads on `name`. Each loops: lock; read the steady_clock time
// the last holder stamped right before its unlock; stamp its own; unlock. A
// handoff is the time from that stamp to the next holder's lock() returning,
// counted when the next holder is another thread. Never throws (as above).
Handoff contended(const MakeLock& make,
                  int threads,
                  const LoopSettings& s,
                  const std::string& name);

// A holder process (`holder_argv`, which prints a line starting with
// "acquired" once it holds `name`) is SIGKILLed while a thread of this
// process waits on make(name); `queued` says when that waiter is in line.
// Measures from the SIGKILL to the waiter's lock returning. Never throws: a
// failure is in Death::error.
Death death_of_holder(const std::vector<std::string>& holder_argv,
                      const MakeLock& make,
                      const std::string& name,
                      const LoopSettings& s,
                      const std::function<bool()>& queued);

// The holder of death_of_holder, as this binary's --hold mode:
//   --hold URI NAME lock|simple WATCHDOG_MS
// takes the lock, prints "acquired" and sleeps until killed.
int hold_mode(int argc, char** argv);

}  // namespace distlock::bench
