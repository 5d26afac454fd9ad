// Helpers shared by the fault tests: client options, waiting on events with
// an upper bound, the server's view of connections, and worker processes
// that report on a pipe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "distlock/client.hpp"
#include "distlock/client_options.hpp"
#include "support/history.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"

namespace distlock::fault {

using namespace std::chrono_literals;

// Options for a Client of `server`: the given watchdog timeout, a quick
// reconnect, and CLIENT SETNAME `name` (so CLIENT LIST tells Clients apart).
ClientOptions options_for(const test::RedisServer& server,
                          std::chrono::milliseconds watchdog,
                          const std::string& name = "distlock");

// Counts stop requests on many stop_tokens and waits for a number of them.
class StopCounter {
 public:
  // Watches `token`; each watched token counts once when it is requested (at
  // once, when it already was).
  void watch(std::stop_token token);
  // Waits at most `bound` until `n` watched tokens were requested.
  bool wait_for(std::size_t n, std::chrono::milliseconds bound);
  std::size_t count();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t count_ = 0;
  std::vector<std::unique_ptr<std::stop_callback<std::function<void()>>>> callbacks_;
};

// Watches one stop_token and records when it was requested.
class LossWatch {
 public:
  explicit LossWatch(std::stop_token token);
  // Waits at most `bound` for the request.
  bool wait(std::chrono::milliseconds bound);
  // steady_clock ns of the request; 0 while not requested.
  std::int64_t lost_at() const { return lost_at_.load(); }

 private:
  std::atomic<std::int64_t> lost_at_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool fired_ = false;
  std::stop_callback<std::function<void()>> callback_;  // last: uses the members above
};

// Waits until `token` is requested, at most `bound`.
bool wait_for_stop(std::stop_token token, std::chrono::milliseconds bound);

// Polls `pred` every few ms until it holds or `bound` passes. For states the
// library offers no event for (a server-side count, a renewed deadline).
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds bound);

// Runs `f` on the Client's I/O thread and returns its result: no other
// handler of that Client runs meanwhile, so `f` sees a quiescent state.
bool on_io_thread(Client& client, const std::function<bool()>& f);

// True when no command is queued or in flight on the Client's data and
// pub/sub connections, checked on its I/O thread.
bool quiescent(Client& client);

// One line of CLIENT LIST.
struct ServerConnection {
  std::string id;
  std::string name;
  bool pubsub = false;  // flags contain 'P'
};
// The server's connections named `name`.
std::vector<ServerConnection> connections_named(const test::RedisServer& server,
                                                const std::string& name);
// Subscribers of `channel` (PUBSUB NUMSUB), asked through redis-cli.
long long subscribers(const test::RedisServer& server, const std::string& channel);

// The channel distlock publishes unlocks of lock `name` on.
std::string unlock_channel(const std::string& name);

// A worker process whose stdout is a pipe read line by line.
class Worker {
 public:
  explicit Worker(const std::vector<std::string>& argv);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // The next line (without '\n'), or nullopt if none came within `bound`
  // (or the worker closed stdout).
  std::optional<std::string> read_line(std::chrono::milliseconds bound);
  test::ChildProcess& process() { return process_; }

 private:
  test::ChildProcess process_;
  int read_fd_ = -1;
  std::string buffer_;
};

// Value of `key` in a "key=value key=value" line; empty when absent.
std::string field(const std::string& line, const std::string& key);

// A record of a hold entered now by `process`, with `token`; the caller sets
// exit_ns and, when the lease was lost, lease_deadline_ns.
test::HoldRecord entering(const std::string& name,
                          int process,
                          std::optional<std::uint64_t> token,
                          int thread = 0);

// The records as if every holder believed its lease valid until it left:
// overlaps of these are holders physically inside together, whether or not
// their leases were still valid.
std::vector<test::HoldRecord> ignoring_leases(std::vector<test::HoldRecord> records);

// Runs the checker and prints its report under `label`: the summary line,
// and with `details` the first listed problems.
test::CheckResult check_and_print(const std::string& label,
                                  const std::vector<test::HoldRecord>& records,
                                  bool details = true);

// Failed logins of `user` the server has logged (ACL LOG, reason auth): how
// a test sees a Client's reconnects being refused.
long long auth_failures(const test::RedisServer& server, const std::string& user);

}  // namespace distlock::fault
