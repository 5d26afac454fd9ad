// Permits a Client holds (Semaphore::acquire) whose lease its watchdog
// cannot keep (docs/semaphore.md, Faults): the holding is lost, the server
// gives the permits back, a release reports lease_lost, and the Client's
// next acquire counts from zero.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <string>

#include "distlock/distlock.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

// The first lease-lost event a Client reports (later ones are ignored).
class FirstLoss {
 public:
  void on_lost(const LeaseLostEvent& e) {
    std::call_once(once_, [&] { reason_.set_value(e.reason); });
  }
  // The reason, once reported within `bound`.
  std::optional<LeaseLostEvent::Reason> wait(std::chrono::milliseconds bound) {
    if (future_.wait_for(bound) != std::future_status::ready) return std::nullopt;
    return future_.get();
  }

 private:
  std::once_flag once_;
  std::promise<LeaseLostEvent::Reason> reason_;
  std::future<LeaseLostEvent::Reason> future_ = reason_.get_future();
};

// A short watchdog lease, so that a renewal is due within the test; every
// other Client's lease is long.
ClientOptions holder_options(const RedisServer& server, FirstLoss& loss) {
  ClientOptions o = options_for(server, 2s);
  o.on_lease_lost = [&loss](const LeaseLostEvent& e) { loss.on_lost(e); };
  return o;
}

long long available(Client& admin, const std::string& name) {
  return admin.semaphore(name).available_permits();
}

TEST(Semaphore, PermitsWhoseWatchdogCannotRenewAreLostGivenBackAndTheirReleaseSaysLeaseLost) {
  FirstLoss loss;  // before the Client, whose I/O thread reports to it
  RedisServer server;
  Client holder(holder_options(server, loss)), admin(options_for(server, 10min));
  Semaphore sem = holder.semaphore("paused");
  ASSERT_TRUE(sem.try_set_permits(2));
  sem.acquire(2);
  ASSERT_EQ(available(admin, "paused"), 0);
  // Paused until the holder's watchdog gives the lease up: its renewals get
  // no answer, and the lease runs out on the Client's clock.
  server.pause();
  const auto reason = loss.wait(20s);
  server.resume();
  ASSERT_TRUE(reason.has_value()) << "the lease was never reported lost";
  EXPECT_EQ(*reason, LeaseLostEvent::Reason::expired);
  // Its lease ends on the server's clock too (a renewal queued during the
  // pause may have run just before that: a lost lease is not renewed again).
  EXPECT_TRUE(eventually([&] { return available(admin, "paused") == 2; }, 20s))
      << "the server did not give the permits back: " << available(admin, "paused");
  std::error_code ec;
  sem.release(2, ec);
  EXPECT_EQ(ec, errc::lease_lost);
  EXPECT_EQ(sem.held_permits(), 0);
  EXPECT_EQ(available(admin, "paused"), 2) << "given back twice";
}

TEST(Semaphore, AfterItsPermitsWereLostTheClientsNextAcquireCountsFromZero) {
  FirstLoss loss;  // before the Client, whose I/O thread reports to it
  RedisServer server;
  Client holder(holder_options(server, loss)), admin(options_for(server, 10min));
  Semaphore sem = holder.semaphore("taken");
  ASSERT_TRUE(sem.try_set_permits(3));
  sem.acquire(2);
  // The holder's lease deadline moved into the past on the server: its next
  // renewal finds the lease over.
  const std::string leases = "distlock_sem_holders:{taken}";
  const Value ids = admin.command("ZRANGE", leases, 0, -1);
  ASSERT_EQ(ids.as_array().size(), 1u);
  admin.command("ZADD", leases, "XX", 0, ids.as_array()[0].as_string());
  ASSERT_TRUE(loss.wait(20s).has_value()) << "the renewal did not report the lease lost";
  sem.acquire(1);
  EXPECT_EQ(sem.held_permits(), 1) << "the lost 2 still counted as held";
  EXPECT_EQ(available(admin, "taken"), 2) << "the lost 2 came back, 1 is taken";
  std::error_code ec;
  sem.release(1, ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(available(admin, "taken"), 3);
  EXPECT_EQ(admin.command("EXISTS", leases, "distlock_sem_counts:{taken}").as_integer(), 0);
}

}  // namespace
}  // namespace distlock
