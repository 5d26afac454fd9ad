#include "fault/fault_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <asio/post.hpp>
#include <cstdio>
#include <future>
#include <limits>
#include <sstream>
#include <system_error>

#include "client_impl.hpp"
#include "net/connection.hpp"

namespace distlock::fault {

ClientOptions options_for(const test::RedisServer& server,
                          std::chrono::milliseconds watchdog,
                          const std::string& name) {
  ClientOptions o = ClientOptions::from_uri(server.uri());
  o.watchdog_timeout = watchdog;
  o.reconnect_min_delay = 10ms;
  o.reconnect_max_delay = 100ms;
  o.client_name = name;
  return o;
}

void StopCounter::watch(std::stop_token token) {
  // Made outside the lock: for a token already requested the callback runs
  // at once, inside this constructor, and takes the lock itself (holding it
  // here deadlocked ServerRestart when the reconnect had already marked the
  // lease lost).
  auto callback =
      std::make_unique<std::stop_callback<std::function<void()>>>(std::move(token), [this] {
        std::lock_guard lock(mutex_);
        ++count_;
        cv_.notify_all();
      });
  std::lock_guard lock(mutex_);
  callbacks_.push_back(std::move(callback));
}

bool StopCounter::wait_for(std::size_t n, std::chrono::milliseconds bound) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, bound, [&] { return count_ >= n; });
}

std::size_t StopCounter::count() {
  std::lock_guard lock(mutex_);
  return count_;
}

LossWatch::LossWatch(std::stop_token token)
    : callback_(std::move(token), [this] {
        lost_at_.store(test::steady_now_ns());
        std::lock_guard lock(mutex_);
        fired_ = true;
        cv_.notify_all();
      }) {}

bool LossWatch::wait(std::chrono::milliseconds bound) {
  std::unique_lock lock(mutex_);
  return cv_.wait_for(lock, bound, [this] { return fired_; });
}

bool wait_for_stop(std::stop_token token, std::chrono::milliseconds bound) {
  StopCounter counter;
  counter.watch(std::move(token));
  return counter.wait_for(1, bound);
}

bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

bool on_io_thread(Client& client, const std::function<bool()>& f) {
  std::promise<bool> result;
  asio::post(distlock::detail::Access::impl(client)->io(), [&] { result.set_value(f()); });
  return result.get_future().get();
}

bool quiescent(Client& client) {
  detail::ClientImpl& impl = *distlock::detail::Access::impl(client);
  return on_io_thread(client, [&impl] {
    return impl.topology().data_for("").outstanding() == 0 &&
           impl.topology().subscriber_for("").outstanding() == 0;
  });
}

std::vector<ServerConnection> connections_named(const test::RedisServer& server,
                                                const std::string& name) {
  std::vector<ServerConnection> out;
  std::istringstream lines(server.cli({"CLIENT", "LIST"}));
  for (std::string line; std::getline(lines, line);) {
    ServerConnection c;
    std::istringstream fields(line);
    for (std::string f; fields >> f;) {
      const auto eq = f.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = f.substr(0, eq);
      const std::string value = f.substr(eq + 1);
      if (key == "id") c.id = value;
      if (key == "name") c.name = value;
      if (key == "flags") c.pubsub = value.find('P') != std::string::npos;
    }
    if (c.name == name) out.push_back(c);
  }
  return out;
}

long long subscribers(const test::RedisServer& server, const std::string& channel) {
  // redis-cli prints the channel, then its count.
  const std::string out = server.cli({"PUBSUB", "NUMSUB", channel});
  const auto newline = out.find('\n');
  return newline == std::string::npos ? 0 : std::stoll(out.substr(newline + 1));
}

std::string unlock_channel(const std::string& name) {
  return name.find('{') == std::string::npos ? "redisson_lock__channel:{" + name + "}"
                                             : "redisson_lock__channel:" + name;
}

Worker::Worker(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  test::SpawnOptions options;
  options.stdout_fd = fds[1];
  try {
    process_ = test::ChildProcess::spawn(argv, options);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  read_fd_ = fds[0];
}

Worker::~Worker() {
  process_.kill_and_reap();
  if (read_fd_ >= 0) ::close(read_fd_);
}

std::optional<std::string> Worker::read_line(std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    if (const auto newline = buffer_.find('\n'); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{read_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char chunk[4096];
    const ssize_t n = ::read(read_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // the worker closed stdout (exited)
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::string field(const std::string& line, const std::string& key) {
  std::istringstream fields(line);
  for (std::string f; fields >> f;) {
    if (f.rfind(key + "=", 0) == 0) return f.substr(key.size() + 1);
  }
  return {};
}

test::HoldRecord entering(const std::string& name,
                          int process,
                          std::optional<std::uint64_t> token,
                          int thread) {
  test::HoldRecord r;
  r.name = name;
  r.process = process;
  r.thread = thread;
  r.enter_ns = test::steady_now_ns();
  r.fencing_token = token;
  return r;
}

std::vector<test::HoldRecord> ignoring_leases(std::vector<test::HoldRecord> records) {
  for (auto& r : records) r.lease_deadline_ns = std::numeric_limits<std::int64_t>::max();
  return records;
}

test::CheckResult check_and_print(const std::string& label,
                                  const std::vector<test::HoldRecord>& records,
                                  bool details) {
  test::CheckResult result = test::check_mutual_exclusion(records);
  const std::string report = result.report();
  const std::string shown =
      details ? report.substr(0, 2000) : report.substr(0, report.find('\n') + 1);
  std::printf("[%s] %s", label.c_str(), shown.c_str());
  std::fflush(stdout);
  return result;
}

long long auth_failures(const test::RedisServer& server, const std::string& user) {
  // redis-cli prints each entry as "field\nvalue" lines, starting with count.
  std::istringstream lines(server.cli({"ACL", "LOG"}));
  long long total = 0;
  long long count = 0;
  std::string reason;
  std::string username;
  const auto finish_entry = [&] {
    if (reason == "auth" && username == user) total += count;
    count = 0;
    reason.clear();
    username.clear();
  };
  for (std::string key, value; std::getline(lines, key) && std::getline(lines, value);) {
    if (key == "count") {
      finish_entry();
      count = std::stoll(value);
    } else if (key == "reason") {
      reason = value;
    } else if (key == "username") {
      username = value;
    }
  }
  finish_entry();
  return total;
}

}  // namespace distlock::fault
