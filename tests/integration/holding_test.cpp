// Holdings: what the watchdog renews, and how long a holder believes a lease.
#include <gtest/gtest.h>

#include <asio/post.hpp>
#include <chrono>
#include <future>
#include <string>

#include "client_impl.hpp"
#include "distlock/distlock.hpp"
#include "runtime/lease_state.hpp"
#include "runtime/watchdog.hpp"
#include "support/redis_server.hpp"
#include "sync/lock_keys.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using runtime::LeaseState;
using runtime::Renewal;
using test::RedisServer;

long long evalsha_calls(Client& admin) {
  const std::string stats = admin.command("INFO", "commandstats").as_string();
  const auto at = stats.find("cmdstat_evalsha:calls=");
  if (at == std::string::npos) return 0;
  return std::stoll(stats.substr(at + std::string("cmdstat_evalsha:calls=").size()));
}

bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds bound) {
  const auto end = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
  }
  return pred();
}

TEST(Holding, TheWatchdogRenewsTwoKindsWithTwoLeaseLengthsInOneBatchCall) {
  RedisServer server;
  Client admin(server.uri());
  ClientOptions o = ClientOptions::from_uri(server.uri());
  o.watchdog_timeout = 60s;  // no tick of its own during the test
  Client client(o);
  auto impl = distlock::detail::Access::impl(client);

  // A lock's hash field and a SET NX lock's string, with different leases.
  admin.command("HSET", "held:hash", "owner-a", "1");
  admin.command("PEXPIRE", "held:hash", "1000");
  admin.command("SET", "held:string", "token-b", "PX", "1000");
  // Generic holdings: the watchdog needs nothing of the primitive.
  auto hash = std::make_shared<LeaseState>(
      "held:hash", "owner-a", 3000ms, true,
      Renewal{Renewal::Kind::hash_field, "held:hash", "owner-a", {}}, 0.01, nullptr);
  auto string = std::make_shared<LeaseState>(
      "held:string", "token-b", 6000ms, true,
      Renewal{Renewal::Kind::string_value, "held:string", "token-b", {}}, 0.01, nullptr);
  for (const auto& s : {hash, string}) {
    impl->watchdog().add(s);
    s->confirm(runtime::Clock::now());
    s->active = true;
  }
  const long long before = evalsha_calls(admin);
  asio::post(impl->io(), [impl] { impl->watchdog().renew_all_now(); });

  // Both had 1000 ms left: more means renewed.
  ASSERT_TRUE(eventually(
      [&] {
        return admin.command("PTTL", "held:hash").as_integer() > 1000 &&
               admin.command("PTTL", "held:string").as_integer() > 1000;
      },
      10s))
      << "not renewed";
  const auto hash_ttl = admin.command("PTTL", "held:hash").as_integer();
  const auto string_ttl = admin.command("PTTL", "held:string").as_integer();
  EXPECT_LE(hash_ttl, 3000) << "the hash holding got another holding's lease";
  EXPECT_GT(string_ttl, 3000) << "the string holding did not get its own 6 s lease";
  EXPECT_EQ(evalsha_calls(admin) - before, 1) << "both holdings must go in one renewal call";
  EXPECT_FALSE(hash->lost());
  EXPECT_FALSE(string->lost());
  impl->watchdog().remove(hash.get());
  impl->watchdog().remove(string.get());
}

TEST(Holding, ALeaseDeadlineEndsTheClockDriftMarginBeforeTheServersExpiry) {
  RedisServer server;
  ClientOptions o = ClientOptions::from_uri(server.uri());
  o.clock_drift_factor = 0.1;
  Client client(o);
  Lock lock = client.lock("drift");
  const auto before = std::chrono::steady_clock::now();
  lock.lock(1000ms);
  const auto after = std::chrono::steady_clock::now();
  const auto deadline = lock.lease_deadline();
  ASSERT_TRUE(deadline.has_value());
  // sent + 1000 ms - (100 ms + 2 ms), and the acquire was sent in [before, after].
  EXPECT_GE(*deadline, before + 898ms);
  EXPECT_LE(*deadline, after + 898ms) << "the holder believes past the server's expiry margin";
  lock.unlock();
}

TEST(Holding, AClockDriftFactorOutsideZeroToOneHalfIsRejected) {
  for (double bad : {-0.01, 0.5, 2.0}) {
    ClientOptions o;
    o.clock_drift_factor = bad;
    try {
      Client client(o);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument) << bad;
      EXPECT_NE(std::string(e.what()).find("clock_drift_factor"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace distlock
