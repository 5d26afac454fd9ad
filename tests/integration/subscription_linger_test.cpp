// Lingering subscriptions against a real redis-server: a channel whose last
// waiter left stays subscribed for the linger (runtime::Waiters), so a
// thread that waits every round (a fair lock's waiter on its own channel)
// subscribes once, not once per wait; and an idle channel is unsubscribed
// once its linger is over.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "distlock/distlock.hpp"
#include "runtime/waiters.hpp"
#include "support/redis_server.hpp"
#include "support/test_helpers.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::options_for;
using test::RedisServer;

// Sets the process-wide linger for one test.
class LingerFor {
 public:
  explicit LingerFor(std::chrono::milliseconds linger) : previous_(runtime::subscription_linger()) {
    runtime::set_subscription_linger(linger);
  }
  ~LingerFor() { runtime::set_subscription_linger(previous_); }
  LingerFor(const LingerFor&) = delete;
  LingerFor& operator=(const LingerFor&) = delete;

 private:
  std::chrono::milliseconds previous_;
};

long long command_calls(Client& admin, const std::string& command) {
  const std::string stats = admin.command("INFO", "commandstats").as_string();
  const std::string field = "cmdstat_" + command + ":calls=";
  const auto at = stats.find(field);
  return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
}

// Channels the server has any subscriber on.
std::size_t subscribed_channels(Client& admin) {
  return admin.command("PUBSUB", "CHANNELS").as_array().size();
}

long long subscribers(Client& admin, const std::string& channel) {
  return admin.command("PUBSUB", "NUMSUB", channel).as_array()[1].as_integer();
}

// One thread that waits for a fair lock round after round: the same owner,
// so the same channel. Each round is try_lock_for(10min), then unlock.
class RoundWaiter {
 public:
  RoundWaiter(Client& client, Lock& lock) : client_(client), lock_(lock) {
    thread_ = std::thread([this] { run(); });
  }
  // However the test ends, the thread does too: a wait still running ends
  // with the Client (it then throws closed).
  ~RoundWaiter() {
    {
      std::lock_guard guard(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    client_.close();
    thread_.join();
  }
  RoundWaiter(const RoundWaiter&) = delete;
  RoundWaiter& operator=(const RoundWaiter&) = delete;

  void start_round() {
    {
      std::lock_guard guard(mutex_);
      ++requested_;
    }
    changed_.notify_all();
  }
  // The round's outcome (got the lock, as this thread) once it ended within
  // `bound`; nullopt when it is still waiting.
  std::optional<bool> outcome(std::chrono::milliseconds bound) {
    std::unique_lock guard(mutex_);
    if (!changed_.wait_for(guard, bound, [&] { return outcomes_.size() == requested_; })) {
      return std::nullopt;
    }
    return outcomes_.back();
  }

 private:
  void run() {
    for (;;) {
      {
        std::unique_lock guard(mutex_);
        changed_.wait(guard, [&] { return stop_ || requested_ > outcomes_.size(); });
        if (stop_) return;
      }
      bool mine = false;
      try {
        const bool in = lock_.try_lock_for(10min);
        mine = in && lock_.is_held_by_current_thread();
        if (in) lock_.unlock();
      } catch (const Error&) {
      }
      {
        std::lock_guard guard(mutex_);
        outcomes_.push_back(mine);
      }
      changed_.notify_all();
    }
  }

  Client& client_;
  Lock& lock_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t requested_ = 0;
  std::vector<bool> outcomes_;
  bool stop_ = false;
  std::thread thread_;
};

// A holder and a waiter Client on one fair lock. Every lease and the
// waiter's own wait are 10 min: once settled in line, the waiter retries by
// itself only 10 min later, so only the grant's message (on its own channel)
// explains its getting in within the bounds.
struct FairLine {
  explicit FairLine(const std::string& lock_name)
      : name(lock_name),
        holder(options_for(server, 10min)),
        waiter(options_for(server, 10min)),
        held(holder.fair_lock(name)),
        waiting(waiter.fair_lock(name)),
        rounds(waiter, waiting) {}

  // One round: the holder takes the lock, the waiter queues and settles (its
  // first attempt queues it; joining its channel, once confirmed or at once
  // when it is, makes the second), the holder unlocks, and the grant must
  // hand the lock to the waiter. Records the waiter's channel.
  void round(int r) {
    held.lock(10min);
    const long long before = test::evalsha_calls(holder);
    rounds.start_round();
    const std::string queue = "redisson_lock_queue:{" + name + "}";
    std::string owner;
    ASSERT_TRUE(eventually(
        [&] {
          const Value head = holder.command("LINDEX", queue, 0);
          owner = head.is_nil() ? "" : head.as_string();
          return !owner.empty();
        },
        30s))
        << "round " << r << ": the waiter never queued";
    channel = "redisson_lock__channel:{" + name + "}:" + owner;
    ASSERT_TRUE(eventually([&] { return test::evalsha_calls(holder) >= before + 2; }, 30s))
        << "round " << r << ": the waiter did not make its attempt after joining its channel";
    held.unlock();
    const auto got = rounds.outcome(30s);
    ASSERT_TRUE(got.has_value()) << "round " << r << ": the grant did not wake the waiter";
    EXPECT_TRUE(*got) << "round " << r << ": the waiter did not get the lock";
  }

  RedisServer server;
  std::string name;
  Client holder;
  Client waiter;
  Lock held;
  Lock waiting;
  RoundWaiter rounds;
  std::string channel;
};

TEST(SubscriptionLinger, AFairWaiterThatWaitsEveryRoundSubscribesOnceAndTheGrantWakesItEachRound) {
  // Longer than the test: only a lingering subscription can spare a wait
  // its SUBSCRIBE.
  LingerFor linger(10min);
  FairLine line("linger-fair");
  line.round(0);
  if (testing::Test::HasFatalFailure()) return;
  const long long after_first = command_calls(line.holder, "subscribe");
  EXPECT_GE(after_first, 1) << "the first wait subscribed to the waiter's channel";
  for (int r = 1; r < 4; ++r) {
    line.round(r);
    if (testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(command_calls(line.holder, "subscribe"), after_first)
      << "a later wait on the same channel subscribed again";
}

TEST(SubscriptionLinger,
     ALingeringChannelIsResubscribedAfterAReconnectAndTheNextGrantWakesItsWaiter) {
  LingerFor linger(10min);
  FairLine line("linger-reconnect");
  line.round(0);
  if (testing::Test::HasFatalFailure()) return;
  ASSERT_EQ(subscribers(line.holder, line.channel), 1) << "the idle channel did not linger";
  const long long before = command_calls(line.holder, "subscribe");
  // Only the waiter's Client has a pub/sub connection with a subscription;
  // killing every pub/sub connection drops it.
  line.holder.command("CLIENT", "KILL", "TYPE", "pubsub");
  ASSERT_TRUE(eventually([&] { return command_calls(line.holder, "subscribe") > before; }, 30s))
      << "the idle channel was not resubscribed after the reconnect";
  ASSERT_TRUE(eventually([&] { return subscribers(line.holder, line.channel) == 1; }, 30s));
  line.round(1);
}

TEST(SubscriptionLinger, AnIdleSubscriptionIsDroppedOnceItsLingerIsOver) {
  LingerFor linger(200ms);
  RedisServer server;
  Client holder(options_for(server, 10min));
  Client waiter(options_for(server, 10min));
  Lock held = holder.lock("linger-drop");
  Lock waiting = waiter.lock("linger-drop");
  held.lock(10min);
  const long long before = test::evalsha_calls(holder);
  auto got = std::async(std::launch::async, [&] {
    const bool in = waiting.try_lock_for(10min);
    if (in) waiting.unlock();
    return in;
  });
  ASSERT_TRUE(eventually([&] { return subscribed_channels(holder) == 1; }, 30s))
      << "the contended waiter never subscribed to the lock's channel";
  ASSERT_TRUE(eventually([&] { return test::evalsha_calls(holder) >= before + 2; }, 30s))
      << "the waiter did not make its attempt after subscribing";
  held.unlock();
  const bool handed = got.wait_for(30s) == std::future_status::ready;
  if (!handed) waiter.close();
  ASSERT_TRUE(handed) << "the unlock did not wake the waiter";
  ASSERT_TRUE(got.get());
  // Nobody waits on the channel now: once the linger is over, the Client
  // unsubscribes it.
  EXPECT_TRUE(eventually([&] { return subscribed_channels(holder) == 0; }, 30s))
      << "the idle subscription was never dropped";
}

}  // namespace
}  // namespace distlock
