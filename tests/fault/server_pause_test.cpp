// The server stops answering (SIGSTOP) while leases are held, then resumes.
// Pausing "for 3 s" sleeps for the pause: that is the scenario, not a wait
// for an event.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "client_impl.hpp"
#include "distlock/distlock.hpp"
#include "fault/fault_support.hpp"

namespace distlock::fault {
namespace {

using Clock = std::chrono::steady_clock;
using runtime::Watchdog;
using test::RedisServer;

ClientOptions paused_options(const RedisServer& server,
                             std::chrono::milliseconds watchdog,
                             const std::string& name) {
  ClientOptions o = options_for(server, watchdog, name);
  o.command_timeout = 1s;
  return o;
}

// Resumes the server when the test leaves early, on a failed assertion
// during the pause, so that the Clients' teardown does not wait on a stopped
// server. Declared after the Clients and leases, so it runs before them.
struct ResumeOnExit {
  RedisServer& server;
  ~ResumeOnExit() { server.resume(); }
};

// Starts `f` (returning an error code) on another thread.
template <class F>
std::future<std::error_code> start(F f) {
  return std::async(std::launch::async, std::move(f));
}

// Its result, or nullopt when it has not finished within 10 s: a hang.
std::optional<std::error_code> result_of(std::future<std::error_code>& call) {
  if (call.wait_for(10s) != std::future_status::ready) return std::nullopt;
  return call.get();
}

TEST(ServerPause, OfThreeSecondsTimesOutCallersAndATenSecondLeaseSurvivesByRenewingAfterIt) {
  RedisServer server;
  Client holder(paused_options(server, 10s, "holder"));
  Client other(paused_options(server, 10s, "other"));
  Lease lease = holder.lock("paused").acquire();
  const auto acquired = Clock::now();
  // Scenario timing: the watchdog renews a third of the lease (3.3 s) after
  // the acquire. The pause starts 1.5 s after it, so that renewal goes out
  // during the pause and times out (1 s command timeout); the test sees it
  // time out before it resumes the server. The next renewal (6.7 s) comes
  // after the pause, well before the 10 s deadline.
  std::this_thread::sleep_until(acquired + 1500ms);
  const Watchdog& watchdog = distlock::detail::Access::impl(holder)->watchdog();
  ASSERT_EQ(watchdog.renewal_failures().timed_out, 0u) << "a renewal timed out before the pause";
  ResumeOnExit resume_on_exit{server};
  server.pause();
  const auto paused = Clock::now();

  auto ping_call = start([&] {
    std::error_code ec;
    const std::string_view args[] = {"PING"};
    other.command(args, ec);
    return ec;
  });
  auto lock_call = start([&] {
    std::error_code ec;
    other.lock("paused").lock(ec);
    return ec;
  });
  auto acquire_call = start([&] {
    std::error_code ec;
    other.lock("paused").try_acquire_for(10s, std::nullopt, ec);
    return ec;
  });
  const auto ping = result_of(ping_call);
  const auto locked = result_of(lock_call);
  const auto acquired_during = result_of(acquire_call);
  ASSERT_TRUE(ping && locked && acquired_during) << "a call hung while the server was paused";
  EXPECT_EQ(*ping, errc::timeout);
  EXPECT_EQ(*locked, errc::timeout);
  EXPECT_EQ(*acquired_during, errc::timeout);

  ASSERT_TRUE(eventually([&] { return watchdog.renewal_failures().timed_out >= 1; }, 10s))
      << "no renewal went out and timed out during the pause";
  EXPECT_FALSE(lease.stop_token().stop_requested()) << "a timed-out renewal lost the lease";
  std::this_thread::sleep_until(paused + 3s);  // the scenario: a pause of at least 3 s
  const auto resuming = Clock::now();
  server.resume();

  // A deadline past resuming + 10 s comes from a renewal sent after the pause.
  EXPECT_TRUE(eventually([&] { return lease.deadline() >= resuming + 10s; }, 10s))
      << "no renewal confirmed after the pause";
  EXPECT_FALSE(lease.stop_token().stop_requested());
  EXPECT_TRUE(lease.valid());
  EXPECT_FALSE(other.lock("paused").try_acquire().has_value()) << "the lease lost its key";
  std::error_code ec;
  lease.release(ec);
  EXPECT_FALSE(ec) << ec.message();
}

TEST(ServerPause, OfFourSecondsPastATwoSecondLeaseReportsTheLeaseLostAsExpired) {
  RedisServer server;
  std::promise<LeaseLostEvent::Reason> reason;
  ClientOptions o = paused_options(server, 2s, "holder");
  o.on_lease_lost = [&](const LeaseLostEvent& e) { reason.set_value(e.reason); };
  Client holder(o);
  Client other(paused_options(server, 2s, "other"));
  Lease lease = holder.lock("paused-past").acquire();
  const std::stop_token lost = lease.stop_token();

  ResumeOnExit resume_on_exit{server};
  server.pause();
  const auto paused = Clock::now();
  // The deadline passes during the pause: the holder is told then, not later.
  ASSERT_TRUE(wait_for_stop(lost, 10s)) << "the stop_token was not requested";
  EXPECT_FALSE(lease.valid());
  // on_lease_lost runs right after the stop request, on the I/O thread.
  auto reported = reason.get_future();
  ASSERT_EQ(reported.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(reported.get(), LeaseLostEvent::Reason::expired);
  std::this_thread::sleep_until(paused + 4s);
  server.resume();

  std::error_code ec;
  lease.release(ec);
  EXPECT_EQ(ec, errc::lease_lost);
  EXPECT_TRUE(other.lock("paused-past").try_acquire().has_value())
      << "the key outlived its lease on the server";
}

// The checker inside a fault: three worker processes take three fenced locks
// while this test also holds "mx:0" with a 1 s watchdog lease across a 3 s
// pause. Its lease runs out during the pause and workers take "mx:0" after
// it, while this holder is still inside: physically overlapping holds, but
// never two holders that both believed their lease valid.
TEST(ServerPause, LongerThanTheLeaseNeverLetsTwoHoldersBelieveTheirLeasesValidAtOnce) {
  RedisServer server;
  const std::string dir = test::make_temp_dir("distlock-fault-");
  constexpr int kWorkers = 3;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::filesystem::path> files;
  for (int p = 0; p < kWorkers; ++p) {
    files.push_back(dir + "/worker-" + std::to_string(p) + ".history");
    // 4 threads, 3 names, 1 s watchdog, 5 s command timeout (longer than the
    // pause, so holders inside it come back to it), until SIGUSR1.
    workers.push_back(std::make_unique<Worker>(std::vector<std::string>{
        DISTLOCK_FAULT_WORKER, "history", server.uri(), std::to_string(p + 1), "4", "3",
        files.back().string(), "1000", "5000", "0"}));
  }
  Client client(options_for(server, 1s, "test-holder"));
  auto counter = [&] {
    const std::string v = server.cli({"GET", "counter:mx:0"});
    return v.empty() ? 0LL : std::stoll(v);
  };
  ASSERT_TRUE(eventually([&] { return counter() >= 20; }, 30s)) << "the workers made no progress";

  Lock lock = client.fenced_lock("mx:0");
  lock.lock();
  test::HoldRecord mine = entering("mx:0", 0, lock.fencing_token());
  LossWatch loss(lock.stop_token());

  ResumeOnExit resume_on_exit{server};
  server.pause();
  const auto paused = Clock::now();
  ASSERT_TRUE(loss.wait(10s)) << "the 1 s lease was not reported lost in the pause";
  std::this_thread::sleep_until(paused + 3s);
  server.resume();
  const long long at_resume = counter();
  // Workers take "mx:0" while this holder is still inside.
  ASSERT_TRUE(eventually([&] { return counter() >= at_resume + 10; }, 20s))
      << "no worker took mx:0 after the pause";
  mine.exit_ns = test::steady_now_ns();
  // Believed valid until its deadline (counted from when the acquire or the
  // last confirmed renewal was sent), or until told of the loss if that came
  // first, as Lock::lease_valid() sees it. The notice alone can come later
  // than the deadline: the expiry timer fires at the deadline, on an I/O
  // thread that a loaded machine may run late, while the server may let the
  // next holder in from the deadline on.
  const auto deadline = lock.lease_deadline();
  ASSERT_TRUE(deadline.has_value()) << "held, but no lease deadline";
  mine.lease_deadline_ns = std::min(test::steady_ns(*deadline), loss.lost_at());
  std::error_code ec;
  lock.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost);

  for (auto& w : workers) w->process().signal(SIGUSR1);
  long ops = 0;
  long lost_leases = 0;
  for (auto& w : workers) {
    const auto line = w->read_line(30s);
    ASSERT_TRUE(line.has_value()) << "a worker did not finish";
    std::printf("[pause] worker: %s\n", line->c_str());
    ops += std::stol(field(*line, "ops"));
    lost_leases += std::stol(field(*line, "lost"));
    const auto status = w->process().wait_for_exit(30s);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(*status, 0) << test::describe_wait_status(*status);
  }
  std::vector<test::HoldRecord> records = test::read_history(files);
  ASSERT_EQ(records.size(), static_cast<std::size_t>(ops));
  std::printf("[pause] this holder: %s\n", test::to_string(mine).c_str());
  records.push_back(mine);
  const auto result = check_and_print("pause, leases", records);
  EXPECT_TRUE(result.ok()) << result.report();
  // A record drops out of the overlap check only when its lease ended before
  // its holder entered, and such a holder found its lease invalid as it left:
  // its worker counted it lost.
  EXPECT_LE(result.excluded_record_count, static_cast<std::size_t>(lost_leases)) << result.report();
  const auto physical = check_and_print("pause, ignoring leases", ignoring_leases(records), false);
  EXPECT_GE(physical.overlap_count, 1u)
      << "this holder stayed inside past its lease while workers held mx:0";
  std::printf("[pause] %ld worker leases lost; %zu physical overlaps, all after a lease ended\n",
              lost_leases, physical.overlap_count);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace distlock::fault
