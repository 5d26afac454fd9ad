// A separate process for the fault tests. In every mode it prints its results
// as one line on stdout ("key=value ..."), flushed, and exits 0 unless it
// could not run at all.
//
//   distlock_fault_worker hold-fenced URI NAME WATCHDOG_MS DATA_KEY HISTORY [rw-write|rw-read]
//     Takes the fenced lock NAME (thread-owned, watchdog lease) and prints
//     "acquired token=T". Then waits for SIGUSR1, as a holder stalled in its
//     critical section would (the test pauses it with SIGSTOP meanwhile), and
//     on it makes the write it was about to make: fenced_set(DATA_KEY, ...,
//     T). It then waits (at most 10 s) for the lease's stop_token, unlocks,
//     records its hold in the history file HISTORY and prints
//     "result written=0|1 write_error=E stop=0|1 valid=0|1 unlock=E".
//     With rw-write it holds the write side of the fenced read-write lock
//     NAME instead; with rw-read its read side, which has no token (T is 0)
//     and makes no write (written=0 write_error=none).
//
//   distlock_fault_worker history URI PROCESS THREADS NAMES HISTORY WATCHDOG_MS
//                         COMMAND_TIMEOUT_MS DURATION_MS [rw|simple]
//     THREADS threads take the fenced locks "mx:0".."mx:<NAMES-1>" at random
//     until DURATION_MS has passed (0: no limit) or SIGUSR1 arrives. Even
//     threads hold them thread-owned (lock / unlock), odd ones as a Lease.
//     Inside, each does a non-atomic increment of "counter:<name>" (GET, then
//     SET n+1) and records the hold (enter, exit, token, end of the lease's
//     believed validity) in HISTORY. Errors (timeouts while the server is
//     paused, ...) are counted, never fatal. Prints "done ops=N errors=E
//     lost=L increments=I" where increments counts GET+SET pairs that both
//     succeeded.
//     With a last argument "simple", the locks are fenced SimpleLocks (SET
//     NX). With "rw", they are fenced read-write locks: every fourth thread
//     reads (lock_shared) and checks that no writer is inside (writers SET
//     "writing:<name>" on entering and DEL it before leaving), the others
//     write as above; the line adds "reads=R read_overlaps=V".
//
//   distlock_fault_worker semaphore-history URI PROCESS THREADS ROUNDS HISTORY
//     (issue 12) THREADS threads each acquire 1 permit of the semaphore
//     "sem-mx" ROUNDS times (bounded waits of 60 s), stay inside ~1 ms,
//     record the stay in HISTORY and release. Prints "done ops=N errors=E".
//
//   distlock_fault_worker history-fair ARGS...
//     As history, on fenced fair locks (Client::fenced_fair_lock).
//
//   distlock_fault_worker history-zk URI PROCESS THREADS NAMES HISTORY COUNTER_DIR
//                         DURATION_MS
//     (issue 28) As history, for a zookeeper:// URI (the Client is made from
//     the URI alone: its session_timeout_ms is the lease): fenced locks
//     "mx:0".."mx:<NAMES-1>", even threads thread-owned, odd ones as a
//     Lease. Such a Client has no Redis commands, so the non-atomic increment
//     inside is of the file COUNTER_DIR/<name> (read the integer, missing or
//     empty is 0, then rewrite it with n+1: racy without the lock). Prints
//     the same "done ..." line; increments counts reads+writes that both
//     succeeded.
//
//   distlock_fault_worker hold URI NAME [wait-loss]
//     (issue 29) Takes the fenced lock NAME of any backend (the Client is made
//     from the URI alone) and prints "acquired token=T". Then waits for
//     SIGUSR1 (the test may pause it with SIGSTOP meanwhile), unlocks and
//     prints "result valid=0|1 stop=0|1 unlock=E": whether it still held a
//     valid lease, whether its stop token was requested, and unlock's error.
//     With wait-loss it first waits (at most 10 s) for the stop token: a
//     loss that happened while it was stopped is noticed after SIGCONT.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "distlock/fencing.hpp"
#include "support/history.hpp"

namespace {

using namespace std::chrono_literals;
using distlock::test::HoldRecord;
using distlock::test::steady_now_ns;

std::string code_name(const std::error_code& ec) {
  if (!ec) return "none";
  std::string text = ec.message();
  std::replace(text.begin(), text.end(), ' ', '_');
  return text;
}

// Blocks SIGUSR1 in this thread and every thread started after, so sigwait()
// receives it.
sigset_t block_sigusr1() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

distlock::ClientOptions worker_options(const std::string& uri,
                                       long watchdog_ms,
                                       long command_timeout_ms,
                                       const std::string& name) {
  distlock::ClientOptions o = distlock::ClientOptions::from_uri(uri);
  o.watchdog_timeout = std::chrono::milliseconds(watchdog_ms);
  if (command_timeout_ms > 0) o.command_timeout = std::chrono::milliseconds(command_timeout_ms);
  o.reconnect_min_delay = 10ms;
  o.reconnect_max_delay = 100ms;
  o.client_name = name;
  return o;
}

// Records when a stop_token is requested (0 while it is not).
class LossClock {
 public:
  explicit LossClock(std::stop_token token)
      : callback_(std::move(token), [this] {
          lost_at_.store(steady_now_ns());
          std::lock_guard lock(mutex_);
          fired_ = true;
          cv_.notify_all();
        }) {}

  std::int64_t lost_at() const { return lost_at_.load(); }
  bool wait(std::chrono::milliseconds bound) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, bound, [this] { return fired_; });
  }

 private:
  std::atomic<std::int64_t> lost_at_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool fired_ = false;
  std::stop_callback<std::function<void()>> callback_;
};

// The end of the time a holder believed its lease valid, read as it leaves:
// its deadline (which only moves later while the lease is renewed), or the
// moment the loss was signalled if that came first. A loss requested but not
// yet signalled happened before now, so now bounds it (later than the truth,
// never hiding an overlap). A held lock always has a deadline; a missing one
// is recorded as 0, which the checker reports as an invalid record, so the
// run fails instead of the record silently dropping out of the overlap check.
std::int64_t believed_until(std::optional<std::chrono::steady_clock::time_point> deadline,
                            const std::stop_token& stop,
                            const LossClock& loss,
                            std::int64_t exit_ns) {
  if (!deadline) return 0;
  std::int64_t end = distlock::test::steady_ns(*deadline);
  if (stop.stop_requested()) {
    const std::int64_t lost = loss.lost_at();
    end = std::min(end, lost != 0 ? lost : exit_ns);
  }
  return end;
}

int hold_fenced(const std::vector<std::string>& args) {
  const std::string side = args.size() == 6 ? args[5] : "";
  if ((args.size() != 5 && args.size() != 6) ||
      (!side.empty() && side != "rw-write" && side != "rw-read")) {
    std::fprintf(stderr,
                 "usage: hold-fenced URI NAME WATCHDOG_MS DATA_KEY HISTORY [rw-write|rw-read]\n");
    return 2;
  }
  sigset_t usr1 = block_sigusr1();
  distlock::Client client(worker_options(args[0], std::stol(args[2]), 0, "paused-holder"));
  distlock::Lock lock = side.empty()         ? client.fenced_lock(args[1])
                        : side == "rw-write" ? client.fenced_read_write_lock(args[1]).write_lock()
                                             : client.fenced_read_write_lock(args[1]).read_lock();
  lock.lock();
  HoldRecord record;
  record.name = args[1];
  record.process = 1;
  record.enter_ns = steady_now_ns();
  record.fencing_token = lock.fencing_token();
  LossClock loss(lock.stop_token());
  std::printf("acquired token=%llu\n",
              static_cast<unsigned long long>(record.fencing_token.value_or(0)));
  std::fflush(stdout);

  int signal_number = 0;
  sigwait(&usr1, &signal_number);
  // Resumed: write at once, as a holder that does not know it was stalled.
  std::error_code write_error;
  const bool written = record.fencing_token &&
                       distlock::fenced_set(client, args[3], "stale write from the paused holder",
                                            *record.fencing_token, write_error);
  record.exit_ns = steady_now_ns();
  const bool stopped = loss.wait(10s);
  const bool valid = lock.lease_valid();
  // The exact deadline, not the moment the loss was noticed: a stalled
  // process cannot observe its deadline passing, so the notice (after
  // SIGCONT) would overstate how long it believed itself valid.
  record.lease_deadline_ns =
      believed_until(lock.lease_deadline(), lock.stop_token(), loss, record.exit_ns);
  std::error_code unlock_error;
  lock.unlock(unlock_error);
  distlock::test::HistoryWriter history(args[4]);
  history.append(record);
  history.close();
  std::printf("result written=%d write_error=%s stop=%d valid=%d unlock=%s\n", written ? 1 : 0,
              code_name(write_error).c_str(), stopped ? 1 : 0, valid ? 1 : 0,
              code_name(unlock_error).c_str());
  std::fflush(stdout);
  return 0;
}

struct Totals {
  std::atomic<long> reads{0};
  std::atomic<long> read_overlaps{0};
  std::atomic<long> ops{0};
  std::atomic<long> errors{0};
  std::atomic<long> lost{0};
  std::atomic<long> increments{0};
};

// The non-atomic read-modify-write a hold of the lock `name` protects: reads
// that lock's counter, then writes it back plus one. True when both steps
// succeeded.
using Increment = std::function<bool(const std::string& name)>;

// Redis: GET then SET n+1 of "counter:<name>".
bool redis_increment(distlock::Client& client, const std::string& name) {
  const std::string counter = "counter:" + name;
  std::error_code ec;
  const std::string_view get[] = {"GET", counter};
  const distlock::Value v = client.command(get, ec);
  if (ec) return false;
  const long long n = v.is_nil() ? 0 : std::stoll(v.as_string());
  const std::string next = std::to_string(n + 1);
  const std::string_view set[] = {"SET", counter, next};
  client.command(set, ec);
  return !ec;
}

// A file: reads the decimal integer in dir/<name> (missing or empty: 0), then
// rewrites the file with n+1. A plain read, then a plain write.
bool file_increment(const std::filesystem::path& dir, const std::string& name) {
  const std::string path = (dir / name).string();
  long long n = 0;
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in >= 0) {
    char text[32];
    const ssize_t got = ::read(in, text, sizeof text);
    ::close(in);
    if (got < 0 || got == static_cast<ssize_t>(sizeof text)) return false;
    if (got > 0) {
      const auto [end, ec] = std::from_chars(text, text + got, n);
      if (ec != std::errc() || end != text + got) return false;
    }
  } else if (errno != ENOENT) {
    return false;
  }
  const std::string next = std::to_string(n + 1);
  const int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return false;
  const bool written = ::write(out, next.data(), next.size()) == static_cast<ssize_t>(next.size());
  return ::close(out) == 0 && written;
}

// A reader of the read-write lock `name`: inside its read hold, no writer's
// "writing:<name>" flag may be set.
void read_once(distlock::Client& client, const std::string& name, Totals& totals) {
  distlock::ReadWriteLock rw = client.fenced_read_write_lock(name);
  std::error_code ec;
  rw.lock_shared(ec);
  if (ec) {
    ++totals.errors;
    return;
  }
  const std::string flag = "writing:" + name;
  const std::string_view get[] = {"GET", flag};
  const distlock::Value v = client.command(get, ec);
  if (ec) {
    ++totals.errors;
  } else if (!v.is_nil()) {
    ++totals.read_overlaps;
  }
  rw.unlock_shared(ec);
  ++totals.reads;
}

// Sets (or clears) the writer-inside flag that readers check.
void flag_writing(distlock::Client& client, const std::string& name, bool inside) {
  std::error_code ec;
  const std::string flag = "writing:" + name;
  if (inside) {
    const std::string_view set[] = {"SET", flag, "1"};
    client.command(set, ec);
  } else {
    const std::string_view del[] = {"DEL", flag};
    client.command(del, ec);
  }
}

void history_thread(distlock::Client& client,
                    distlock::test::HistoryWriter& history,
                    int process,
                    int thread,
                    int names,
                    const std::atomic<bool>& stop,
                    Totals& totals,
                    const std::string& kind,
                    const Increment& increment) {
  std::mt19937 rng(static_cast<unsigned>(process * 1000 + thread));
  const bool thread_owned = thread % 2 == 0;
  while (!stop.load()) {
    const std::string name = "mx:" + std::to_string(rng() % static_cast<unsigned>(names));
    if (kind == "rw" && thread % 4 == 3) {
      read_once(client, name, totals);
      continue;
    }
    distlock::Lock lock = kind == "fair"     ? client.fenced_fair_lock(name)
                          : kind == "rw"     ? client.fenced_read_write_lock(name).write_lock()
                          : kind == "simple" ? client.fenced_simple_lock(name).as_lock()
                                             : client.fenced_lock(name);
    std::error_code ec;
    std::optional<distlock::Lease> lease;
    if (thread_owned) {
      lock.lock(ec);
    } else {
      lease = lock.try_acquire_for(std::chrono::hours(1), std::nullopt, ec);
      if (!ec && !lease) ec = distlock::errc::timeout;
    }
    if (ec) {
      ++totals.errors;
      continue;
    }
    HoldRecord record;
    record.name = name;
    record.process = process;
    record.thread = thread;
    record.enter_ns = steady_now_ns();
    record.fencing_token = thread_owned ? lock.fencing_token() : lease->fencing_token();
    LossClock loss(thread_owned ? lock.stop_token() : lease->stop_token());
    if (kind == "rw") flag_writing(client, name, true);
    if (increment(name)) {
      ++totals.increments;
    } else {
      ++totals.errors;
    }
    if (kind == "rw") flag_writing(client, name, false);
    record.exit_ns = steady_now_ns();
    const bool valid = thread_owned ? lock.lease_valid() : lease->valid();
    const auto deadline =
        thread_owned ? lock.lease_deadline()
                     : std::optional<std::chrono::steady_clock::time_point>(lease->deadline());
    record.lease_deadline_ns = believed_until(
        deadline, thread_owned ? lock.stop_token() : lease->stop_token(), loss, record.exit_ns);
    if (thread_owned) {
      lock.unlock(ec);
    } else {
      lease->release(ec);
    }
    if (ec == distlock::errc::lease_lost || !valid) ++totals.lost;
    history.append(record);
    ++totals.ops;
  }
}

// What a history run is given: the worker's arguments after the URI.
struct HistoryRun {
  int process = 0;
  int threads = 0;
  int names = 0;
  std::string history;
  long duration_ms = 0;
  std::string kind;  // "lock", "fair", "rw" or "simple"
};

// Runs THREADS history_threads on `client` until the duration has passed or
// SIGUSR1 (blocked in `usr1` before the Client started its threads) arrives,
// then prints the "done" line.
int run_history(distlock::Client& client,
                const HistoryRun& run,
                const Increment& increment,
                sigset_t usr1) {
  distlock::test::HistoryWriter history(run.history);

  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable cv;
  // SIGUSR1 ends the run early; a signal sent to ourselves ends the waiter
  // when the run ends by its duration instead.
  std::thread signals([&] {
    int signal_number = 0;
    sigwait(&usr1, &signal_number);
    std::lock_guard lock(mutex);
    stop = true;
    cv.notify_all();
  });
  Totals totals;
  std::vector<std::thread> workers;
  for (int t = 0; t < run.threads; ++t) {
    workers.emplace_back([&, t] {
      history_thread(client, history, run.process, t, run.names, stop, totals, run.kind, increment);
    });
  }
  {
    std::unique_lock lock(mutex);
    if (run.duration_ms > 0) {
      cv.wait_for(lock, std::chrono::milliseconds(run.duration_ms), [&] { return stop.load(); });
    } else {
      cv.wait(lock, [&] { return stop.load(); });
    }
    stop = true;
  }
  for (auto& w : workers) w.join();
  pthread_kill(signals.native_handle(), SIGUSR1);
  signals.join();
  history.close();
  std::printf("done ops=%ld errors=%ld lost=%ld increments=%ld reads=%ld read_overlaps=%ld\n",
              totals.ops.load(), totals.errors.load(), totals.lost.load(), totals.increments.load(),
              totals.reads.load(), totals.read_overlaps.load());
  std::fflush(stdout);
  return 0;
}

int history_mode(const std::vector<std::string>& args, std::string kind) {
  if (args.size() == 9 && kind == "lock" && (args[8] == "rw" || args[8] == "simple")) {
    kind = args[8];
  } else if (args.size() != 8) {
    std::fprintf(stderr,
                 "usage: history URI PROCESS THREADS NAMES HISTORY WATCHDOG_MS "
                 "COMMAND_TIMEOUT_MS DURATION_MS [rw|simple]\n");
    return 2;
  }
  const sigset_t usr1 = block_sigusr1();
  HistoryRun run;
  run.process = std::stoi(args[1]);
  run.threads = std::stoi(args[2]);
  run.names = std::stoi(args[3]);
  run.history = args[4];
  run.duration_ms = std::stol(args[7]);
  run.kind = kind;
  distlock::Client client(worker_options(args[0], std::stol(args[5]), std::stol(args[6]),
                                         "worker-" + std::to_string(run.process)));
  return run_history(
      client, run, [&client](const std::string& name) { return redis_increment(client, name); },
      usr1);
}

int history_zk_mode(const std::vector<std::string>& args) {
  if (args.size() != 7) {
    std::fprintf(stderr,
                 "usage: history-zk URI PROCESS THREADS NAMES HISTORY COUNTER_DIR DURATION_MS\n");
    return 2;
  }
  const sigset_t usr1 = block_sigusr1();
  HistoryRun run;
  run.process = std::stoi(args[1]);
  run.threads = std::stoi(args[2]);
  run.names = std::stoi(args[3]);
  run.history = args[4];
  run.duration_ms = std::stol(args[6]);
  run.kind = "lock";
  const std::filesystem::path counters = args[5];
  distlock::Client client(args[0]);
  return run_history(
      client, run, [&counters](const std::string& name) { return file_increment(counters, name); },
      usr1);
}

int semaphore_history(const std::vector<std::string>& args) {
  if (args.size() != 5)
    throw std::runtime_error("semaphore-history URI PROCESS THREADS ROUNDS FILE");
  distlock::Client client(args[0]);
  const int process = std::stoi(args[1]);
  const int threads = std::stoi(args[2]);
  const int rounds = std::stoi(args[3]);
  distlock::test::HistoryWriter history(args[4]);
  std::atomic<long> ops{0}, errors{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      distlock::Semaphore sem = client.semaphore("sem-mx");
      for (int r = 0; r < rounds; ++r) {
        std::error_code ec;
        if (!sem.try_acquire_for(1, std::chrono::seconds(60), ec) || ec) {
          ++errors;
          continue;
        }
        distlock::test::HoldRecord rec;
        rec.name = "sem-mx";
        rec.process = process;
        rec.thread = t;
        rec.enter_ns = distlock::test::steady_now_ns();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        rec.exit_ns = distlock::test::steady_now_ns();
        history.append(rec);
        sem.release(1, ec);
        if (ec) ++errors;
        ++ops;
      }
    });
  }
  for (auto& th : pool) th.join();
  history.close();
  std::printf("done ops=%ld errors=%ld\n", ops.load(), errors.load());
  std::fflush(stdout);
  return 0;
}

}  // namespace

int hold_mode(const std::vector<std::string>& args) {
  if (args.size() != 2 && (args.size() != 3 || args[2] != "wait-loss")) {
    std::fprintf(stderr, "usage: hold URI NAME [wait-loss]\n");
    return 2;
  }
  sigset_t usr1 = block_sigusr1();
  distlock::Client client(args[0]);
  distlock::Lock lock = client.fenced_lock(args[1]);
  lock.lock();
  std::printf("acquired token=%llu\n",
              static_cast<unsigned long long>(lock.fencing_token().value_or(0)));
  std::fflush(stdout);
  int signal_number = 0;
  sigwait(&usr1, &signal_number);
  if (args.size() == 3) {
    LossClock loss(lock.stop_token());
    loss.wait(10s);
  }
  const bool valid = lock.lease_valid();
  const bool stopped = lock.stop_token().stop_requested();
  std::error_code unlock_error;
  lock.unlock(unlock_error);
  std::printf("result valid=%d stop=%d unlock=%s\n", valid ? 1 : 0, stopped ? 1 : 0,
              code_name(unlock_error).c_str());
  std::fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s hold|hold-fenced|history|history-fair|history-zk|semaphore-history "
                 "ARGS...\n",
                 argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (mode == "hold-fenced") return hold_fenced(args);
    if (mode == "hold") return hold_mode(args);
    if (mode == "history") return history_mode(args, "lock");
    if (mode == "history-fair") return history_mode(args, "fair");
    if (mode == "history-zk") return history_zk_mode(args);
    if (mode == "semaphore-history") return semaphore_history(args);
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fault worker failed: %s\n", e.what());
    return 1;
  }
}
