// Client metrics (issue 14) against real redis-server processes: the counts
// after a scripted workload, a lost lease, the long-hold warning, and
// /metrics over HTTP.
#include <gtest/gtest.h>

#include <array>
#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/error.hpp>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"
#include "unit/prometheus_parser.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;
using Labels = std::map<std::string, std::string>;

std::uint64_t acquires(const MetricsSnapshot& s, MetricPrimitive p, AcquireResult r) {
  return s.of(p).acquires_of(r);
}

// Runs a shell command and returns its standard output.
std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

// Whether a socket of this process listens on local TCP `port`: a LISTEN
// entry (state 0A) of /proc/net/tcp or tcp6 whose inode is one of this
// process's open descriptors. Unlike a connect, this is not fooled by another
// process that binds the port once it is free, nor by a leaked socket that
// still accepts into its backlog while nobody answers.
bool this_process_listens_on(std::uint16_t port) {
  std::set<std::string> inodes;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.starts_with("socket:[")) {
      inodes.insert(target.substr(8, target.size() - 9));
    }
  }
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      std::istringstream fields(line);
      std::string sl, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> sl >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      const auto colon = local.rfind(':');
      if (colon == std::string::npos || state != "0A") continue;
      if (std::stoul(local.substr(colon + 1), nullptr, 16) == port && inodes.contains(inode)) {
        return true;
      }
    }
  }
  return false;
}

// 3 uncontended lock/unlock, 1 try_lock that fails, 1 lock that waits for
// another Client's unlock, 1 semaphore Permit acquired and released.
void scripted_workload(Client& client, Client& other) {
  Lock a = client.lock("metrics:a");
  for (int i = 0; i < 3; ++i) {
    a.lock();
    a.unlock();
  }
  Lock b_other = other.lock("metrics:b");
  b_other.lock();
  EXPECT_FALSE(client.lock("metrics:b").try_lock());
  b_other.unlock();

  Lock c_other = other.lock("metrics:c");
  c_other.lock();
  const long long before = test::evalsha_calls(other);
  auto waiter = std::async(std::launch::async, [&client] {
    Lock c = client.lock("metrics:c");
    const bool got = c.try_lock_for(30s);
    if (got) c.unlock();
    return got;
  });
  // The waiter's first attempt has run (and found it held) before the unlock.
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(other) > before; }, 10s));
  c_other.unlock();
  ASSERT_EQ(waiter.wait_for(30s), std::future_status::ready);
  EXPECT_TRUE(waiter.get());

  Semaphore sem = client.semaphore("metrics:s");
  (void)sem.try_set_permits(1);
  Permit permit = sem.acquire_permit(1);
  permit.release();
}

TEST(Metrics, CountsAfterAScriptedWorkloadAreExactlyWhatHappened) {
  RedisServer server;
  Client client(options_for(server));
  Client other(options_for(server));
  scripted_workload(client, other);
  const MetricsSnapshot s = client.metrics();

  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.client_id, client.id());
  EXPECT_EQ(acquires(s, MetricPrimitive::lock, AcquireResult::acquired), 4u);
  EXPECT_EQ(acquires(s, MetricPrimitive::lock, AcquireResult::not_acquired), 1u);
  EXPECT_EQ(acquires(s, MetricPrimitive::lock, AcquireResult::failed), 0u);
  EXPECT_EQ(acquires(s, MetricPrimitive::lock, AcquireResult::cancelled), 0u);
  EXPECT_EQ(s.of(MetricPrimitive::lock).contended, 1u) << "only the lock that waited";
  EXPECT_EQ(s.of(MetricPrimitive::lock).wait.count, 5u) << "every acquire, any outcome";
  EXPECT_EQ(s.of(MetricPrimitive::lock).hold.count, 4u) << "every hold released";
  EXPECT_EQ(acquires(s, MetricPrimitive::semaphore, AcquireResult::acquired), 1u);
  EXPECT_EQ(s.of(MetricPrimitive::semaphore).contended, 0u);
  EXPECT_EQ(s.of(MetricPrimitive::semaphore).wait.count, 1u);
  EXPECT_EQ(s.of(MetricPrimitive::semaphore).hold.count, 1u);
  for (auto p :
       {MetricPrimitive::fair_lock, MetricPrimitive::read_lock, MetricPrimitive::write_lock,
        MetricPrimitive::simple_lock, MetricPrimitive::latch, MetricPrimitive::rate_limiter}) {
    EXPECT_EQ(s.of(p).wait.count, 0u) << to_string(p);
    EXPECT_EQ(s.of(p).hold.count, 0u) << to_string(p);
  }
  EXPECT_EQ(s.held_now, 0);
  EXPECT_EQ(s.leases_lost, (std::array<std::uint64_t, 3>{0, 0, 0}));
  EXPECT_EQ(s.reconnects, 0u);
  // The other Client counts its own two holds only.
  EXPECT_EQ(acquires(other.metrics(), MetricPrimitive::lock, AcquireResult::acquired), 2u);
}

TEST(Metrics, TheHeldGaugeCountsAHoldUntilItIsReleased) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("metrics:gauge");
  lock.lock();
  EXPECT_EQ(client.metrics().held_now, 1);
  EXPECT_EQ(client.metrics().of(MetricPrimitive::lock).hold.count, 0u);
  lock.unlock();
  EXPECT_EQ(client.metrics().held_now, 0);
  EXPECT_EQ(client.metrics().of(MetricPrimitive::lock).hold.count, 1u);
}

TEST(Metrics, ALeaseWhoseKeyIsFlushedCountsOneLossTakenAndOneFailedRenewal) {
  RedisServer server;
  Client client(options_for(server, 3s));
  Client admin(options_for(server));
  Lock lock = client.lock("metrics:lost");
  lock.lock();
  admin.command("FLUSHALL");
  ASSERT_TRUE(test::wait_for_stop(lock.stop_token(), 10s)) << "the renewal never found it gone";
  const MetricsSnapshot s = client.metrics();
  const auto taken = static_cast<std::size_t>(LeaseLostEvent::Reason::taken);
  EXPECT_EQ(s.leases_lost, (std::array<std::uint64_t, 3>{0, 1, 0})) << "reason index " << taken;
  EXPECT_EQ(s.renewals_failed, 1u);
  EXPECT_EQ(s.held_now, 0) << "a lost lease is not held, even before its holder lets go";
  EXPECT_EQ(s.of(MetricPrimitive::lock).hold.count, 0u) << "observed when its holder lets go";
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(client.metrics().held_now, 0) << "not counted out twice";
  EXPECT_EQ(client.metrics().of(MetricPrimitive::lock).hold.count, 1u);
}

TEST(Metrics, ClosingAClientWhileItHoldsLeavesNothingHeldAndCountsTheLosses) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("metrics:close");
  Lease lease = client.lock("metrics:close-lease").acquire();
  lock.lock();
  ASSERT_EQ(client.metrics().held_now, 2);
  client.close();
  const MetricsSnapshot s = client.metrics();
  EXPECT_EQ(s.held_now, 0);
  const auto closed = static_cast<std::size_t>(LeaseLostEvent::Reason::client_closed);
  EXPECT_EQ(s.leases_lost[closed], 2u);
}

TEST(Metrics, PrometheusTextOfAClientParsesAndShowsItsCounts) {
  RedisServer server;
  Client client(options_for(server));
  Client other(options_for(server));
  scripted_workload(client, other);
  const auto p = test::parse_prometheus(prometheus_text(client));
  EXPECT_EQ(
      p.value("distlock_acquires_total", Labels{{"primitive", "lock"}, {"outcome", "acquired"}}),
      4);
  EXPECT_EQ(p.value("distlock_acquires_contended_total", Labels{{"primitive", "lock"}}), 1);
  EXPECT_EQ(p.value("distlock_acquire_wait_seconds_count", Labels{{"primitive", "lock"}}), 5);
  EXPECT_EQ(
      p.value("distlock_hold_seconds_bucket", Labels{{"primitive", "semaphore"}, {"le", "+Inf"}}),
      1);
}

TEST(Metrics, ACancelledAsyncAcquireCountsAsCancelled) {
  RedisServer server;
  Client client(options_for(server));
  Client holder(options_for(server));
  Lock held = holder.lock("metrics:cancel");
  held.lock();
  const long long before = test::evalsha_calls(holder);
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  client.lock("metrics:cancel")
      .async_acquire(asio::bind_cancellation_slot(
          signal.slot(), [&](std::error_code ec, Lease) { done.set_value(ec); }));
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(holder) > before; }, 10s));
  signal.emit(asio::cancellation_type::terminal);
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(f.get(), asio::error::operation_aborted);
  const MetricsSnapshot s = client.metrics();
  EXPECT_EQ(acquires(s, MetricPrimitive::lock, AcquireResult::cancelled), 1u);
  EXPECT_EQ(acquires(s, MetricPrimitive::lock, AcquireResult::failed), 0u);
  EXPECT_EQ(s.of(MetricPrimitive::lock).wait.count, 1u);
  held.unlock();
}

TEST(Metrics, AKilledDataConnectionCountsOneReconnect) {
  RedisServer server;
  Client client(options_for(server));
  client.command("PING");
  EXPECT_EQ(client.metrics().reconnects, 0u);
  server.cli({"CLIENT", "KILL", "TYPE", "normal"});
  ASSERT_TRUE(eventually([&] { return client.metrics().reconnects >= 1; }, 10s))
      << "the data connection never came back";
  EXPECT_EQ(client.command("PING").as_string(), "PONG");
  EXPECT_EQ(client.metrics().reconnects, 1u);
}

// Records on_long_hold events (I/O thread) for the test thread to await.
struct LongHolds {
  std::mutex m;
  std::condition_variable cv;
  std::vector<LongHoldEvent> events;

  bool wait_for(std::size_t n, std::chrono::seconds bound) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, bound, [&] { return events.size() >= n; });
  }
};

TEST(Metrics, LongHoldWarningFiresOnceForAHoldPastTheThresholdAndNotForAShortOne) {
  RedisServer server;
  auto seen = std::make_shared<LongHolds>();
  ClientOptions o = options_for(server);
  o.long_hold_warning = 1s;
  o.on_long_hold = [seen](const LongHoldEvent& e) {
    std::lock_guard lock(seen->m);
    seen->events.push_back(e);
    seen->cv.notify_all();
  };
  Client client(o);
  // Released at once, but the Lease object (and its state) lives on.
  Lease short_hold = client.lock("metrics:short").acquire();
  short_hold.release();
  Lock first = client.lock("metrics:long1");
  first.lock();
  ASSERT_TRUE(seen->wait_for(1, 20s));
  // A second long hold: by its warning, the first has been held past twice
  // the threshold, so a repeated warning for it would show up first.
  Lock second = client.lock("metrics:long2");
  second.lock();
  ASSERT_TRUE(seen->wait_for(2, 20s));
  first.unlock();
  second.unlock();
  std::lock_guard lock(seen->m);
  ASSERT_EQ(seen->events.size(), 2u);
  EXPECT_EQ(seen->events[0].name, "metrics:long1");
  EXPECT_EQ(seen->events[1].name, "metrics:long2");
  EXPECT_TRUE(seen->events[0].owner.starts_with(client.id())) << seen->events[0].owner;
  EXPECT_GE(seen->events[0].held_for, 1s);
}

TEST(Metrics, ANegativeLongHoldWarningIsRejectedWithInvalidArgument) {
  RedisServer server;
  ClientOptions o = options_for(server);
  o.long_hold_warning = -1ms;
  try {
    Client client(o);
    ADD_FAILURE() << "accepted a negative long_hold_warning";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
  }
}

TEST(MetricsServer, ServesMetricsOverHttpThatParse) {
  RedisServer server;
  Client client(options_for(server));
  Lock lock = client.lock("metrics:http");
  lock.lock();
  lock.unlock();
  MetricsServer http(client, "127.0.0.1", 0);
  ASSERT_NE(http.port(), 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(http.port());
  const std::string response = run("curl -s -i --max-time 10 " + url + "/metrics");
  const auto split = response.find("\r\n\r\n");
  ASSERT_NE(split, std::string::npos) << response;
  const std::string head = response.substr(0, split);
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 OK")) << head;
  EXPECT_NE(head.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << head;
  const auto p = test::parse_prometheus(response.substr(split + 4));
  EXPECT_EQ(
      p.value("distlock_acquires_total", Labels{{"primitive", "lock"}, {"outcome", "acquired"}}),
      1);
}

TEST(MetricsServer, AnswersOtherPathsWith404) {
  RedisServer server;
  Client client(options_for(server));
  MetricsServer http(client, "127.0.0.1", 0);
  const std::string code =
      run("curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://127.0.0.1:" +
          std::to_string(http.port()) + "/other");
  EXPECT_EQ(code, "404");
}

TEST(MetricsServer, StopsListeningWhenDestroyed) {
  RedisServer server;
  Client client(options_for(server));
  std::uint16_t port = 0;
  {
    MetricsServer http(client, "127.0.0.1", 0);
    port = http.port();
    ASSERT_TRUE(this_process_listens_on(port)) << "the check does not see a live server";
  }
  EXPECT_FALSE(this_process_listens_on(port))
      << "a socket of this process still listens on port " << port << " after destruction";
}

TEST(MetricsServer, AHostThatIsNotAnAddressIsRejectedWithInvalidArgument) {
  RedisServer server;
  Client client(options_for(server));
  try {
    MetricsServer http(client, "not an address", 0);
    ADD_FAILURE() << "accepted a bad host";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument);
  }
}

}  // namespace
}  // namespace distlock
