// The acquire loop and the wake policies, driven by RESP bytes and a manual
// clock: no server, no sleeps.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "distlock/error.hpp"
#include "resp/decoder.hpp"
#include "runtime/wait_queue.hpp"
#include "sync/acquire_loop.hpp"
#include "sync/lock_step.hpp"

namespace distlock::sync {
namespace {

using namespace std::chrono_literals;
using runtime::Waiter;
using runtime::WaitQueue;
using runtime::Wake;
using Actions = AcquireLoop::Actions;

// acquire.lua's reply, as the server sends it.
Attempt reply(const std::string& bytes) {
  resp::Decoder decoder;
  decoder.feed(bytes.data(), bytes.size());
  std::error_code ec;
  auto value = decoder.next(ec);
  EXPECT_TRUE(value.has_value()) << ec.message();
  return interpret_acquire_reply(value.value_or(Value()));
}

const Clock::time_point t0{std::chrono::hours(1)};  // the manual clock's start

bool nothing(const Actions& a) {
  return !a.undo && !a.leave && !a.cancel_sleep && !a.send && !a.subscribe && !a.sleep_until &&
         !a.done;
}

TEST(AcquireLoop, AnUnansweredAttemptIsUndoneAndNeverResent) {
  AcquireLoop loop(t0 + 10s, 100ms, true);
  ASSERT_TRUE(loop.start().send);
  const Actions a = loop.on_reply(Attempt::no_reply(errc::timeout, "no reply"), t0 + 1s);
  EXPECT_TRUE(a.undo);
  EXPECT_FALSE(a.send);
  ASSERT_TRUE(a.done.has_value());
  EXPECT_EQ(a.done->ec, errc::timeout);
  EXPECT_FALSE(a.done->acquired);
  // Nothing brings it back: no wake-up, timer or late reply sends again.
  EXPECT_TRUE(nothing(loop.on_wake(true)));
  EXPECT_TRUE(nothing(loop.on_timer()));
}

TEST(AcquireLoop, ADeadlineInThePastMakesOneAttemptAndNoWait) {
  AcquireLoop loop(t0 - 1ms, 100ms, true);
  ASSERT_TRUE(loop.start().send);
  const Actions a = loop.on_reply(reply(":5000\r\n"), t0);
  EXPECT_FALSE(a.send);
  EXPECT_FALSE(a.subscribe);
  EXPECT_FALSE(a.sleep_until.has_value());
  ASSERT_TRUE(a.done.has_value());
  EXPECT_FALSE(a.done->acquired);
  EXPECT_FALSE(a.done->ec);
}

TEST(AcquireLoop, AContendedAttemptSubscribesFirstThenSleepsNoLongerThanTheHoldersTtl) {
  AcquireLoop loop(std::nullopt, 100ms, true);
  loop.start();
  const Actions contended = loop.on_reply(reply(":250\r\n"), t0);
  EXPECT_TRUE(contended.subscribe);
  EXPECT_FALSE(contended.send) << "retrying before the subscription could miss an unlock";
  const Actions sleep = loop.subscribed(t0 + 1ms);
  ASSERT_TRUE(sleep.sleep_until.has_value());
  EXPECT_EQ(*sleep.sleep_until, t0 + 251ms);
  EXPECT_TRUE(loop.on_timer().send);
}

TEST(AcquireLoop, AHolderWithoutTtlIsRecheckedAfterTheFallback) {
  AcquireLoop loop(std::nullopt, 100ms, true);
  loop.start();
  loop.on_reply(reply(":-1\r\n"), t0);
  EXPECT_EQ(loop.subscribed(t0).sleep_until, t0 + 100ms);
}

TEST(AcquireLoop, TheSleepEndsAtTheDeadlineWhenThatComesFirst) {
  AcquireLoop loop(t0 + 50ms, 100ms, true);
  loop.start();
  loop.on_reply(reply(":30000\r\n"), t0);
  EXPECT_EQ(loop.subscribed(t0).sleep_until, t0 + 50ms);
  EXPECT_TRUE(loop.on_timer().send) << "one last attempt at the deadline";
  const Actions last = loop.on_reply(reply(":29950\r\n"), t0 + 50ms);
  ASSERT_TRUE(last.done.has_value());
  EXPECT_FALSE(last.done->acquired);
  EXPECT_TRUE(last.leave);
  EXPECT_TRUE(last.pass_signal) << "a waiter that gives up passes its wake-up on";
}

TEST(AcquireLoop, AWakeUpWhileSleepingRetriesAtOnce) {
  AcquireLoop loop(std::nullopt, 100ms, true);
  loop.start();
  loop.on_reply(reply(":30000\r\n"), t0);
  loop.subscribed(t0);
  const Actions woken = loop.on_wake(true);
  EXPECT_TRUE(woken.cancel_sleep);
  EXPECT_TRUE(woken.send);
  const Actions got = loop.on_reply(reply("$-1\r\n"), t0 + 1ms);
  ASSERT_TRUE(got.done.has_value());
  EXPECT_TRUE(got.done->acquired);
  EXPECT_TRUE(got.leave);
  EXPECT_FALSE(got.pass_signal) << "the waiter used its wake-up";
}

TEST(AcquireLoop, AMessageDuringAnAttemptInFlightRetriesWhenItComesBackContended) {
  AcquireLoop loop(std::nullopt, 100ms, true);
  loop.start();
  loop.on_reply(reply(":30000\r\n"), t0);
  loop.subscribed(t0);
  loop.on_timer();  // an attempt in flight
  EXPECT_TRUE(nothing(loop.on_wake(true)));
  const Actions a = loop.on_reply(reply(":29000\r\n"), t0 + 1s);
  EXPECT_TRUE(a.send) << "the unlock came while the attempt was in flight";
  EXPECT_FALSE(a.sleep_until.has_value());
}

TEST(AcquireLoop, AGrantWhileSleepingFinishesAcquiredWithoutAnotherAttempt) {
  AcquireLoop loop(std::nullopt, 100ms, true);
  loop.start();
  loop.on_reply(reply(":30000\r\n"), t0);
  loop.subscribed(t0);
  const Actions a = loop.on_granted(Attempt::acquired(7));
  EXPECT_FALSE(a.send) << "a grant needs no round trip";
  EXPECT_TRUE(a.cancel_sleep);
  EXPECT_TRUE(a.leave);
  EXPECT_FALSE(a.pass_signal) << "the waiter used its message";
  ASSERT_TRUE(a.done.has_value());
  EXPECT_TRUE(a.done->acquired);
  EXPECT_EQ(a.done->token, 7u);
  EXPECT_TRUE(nothing(loop.on_timer()));
}

TEST(AcquireLoop, AGrantWhileAnAttemptIsInFlightWaitsForItsReplyAndRetries) {
  AcquireLoop loop(std::nullopt, 100ms, true);
  loop.start();
  loop.on_reply(reply(":30000\r\n"), t0);
  loop.subscribed(t0);
  loop.on_timer();  // an attempt in flight: its reply, not the message, decides
  EXPECT_TRUE(nothing(loop.on_granted(Attempt::acquired(std::nullopt))));
  const Actions a = loop.on_reply(reply(":29000\r\n"), t0 + 1s);
  EXPECT_TRUE(a.send) << "the attempt ran before the grant: the retry finds it";
  EXPECT_FALSE(a.done.has_value());
}

TEST(AcquireLoop, AGrantAfterTheOperationFinishedChangesNothing) {
  AcquireLoop loop(t0 + 1s, 100ms, true);
  loop.start();
  loop.on_reply(reply(":30000\r\n"), t0);
  loop.subscribed(t0);
  loop.on_abort(errc::closed, "closing");
  EXPECT_TRUE(nothing(loop.on_granted(Attempt::acquired(std::nullopt))));
}

TEST(AcquireLoop, AFencedAcquireFinishesWithItsToken) {
  AcquireLoop loop(std::nullopt, 100ms, true);
  loop.start();
  const Actions a = loop.on_reply(reply("*1\r\n:7\r\n"), t0);
  ASSERT_TRUE(a.done.has_value());
  EXPECT_TRUE(a.done->acquired);
  EXPECT_EQ(a.done->token, 7u);
  EXPECT_FALSE(a.leave) << "it never subscribed";
}

TEST(AcquireLoop, AnAbortWhileAnAttemptIsInFlightUndoesItIfItAcquired) {
  AcquireLoop loop(std::nullopt, 100ms, true);
  loop.start();
  const Actions aborted = loop.on_abort(errc::closed, "cancelled");
  ASSERT_TRUE(aborted.done.has_value());
  EXPECT_EQ(aborted.done->ec, errc::closed);
  const Actions late = loop.on_reply(reply("$-1\r\n"), t0);
  EXPECT_TRUE(late.undo) << "nobody will release what the late attempt took";
  EXPECT_FALSE(late.done.has_value()) << "done runs exactly once";
}

TEST(AcquireLoop, AnErrorReplyOrAnUnexpectedOneFailsWithoutRetrying) {
  AcquireLoop loop(std::nullopt, 100ms, true);
  loop.start();
  const Actions a = loop.on_reply(reply("+OK\r\n"), t0);
  ASSERT_TRUE(a.done.has_value());
  EXPECT_EQ(a.done->ec, errc::protocol_error);
  EXPECT_FALSE(a.send);
  EXPECT_FALSE(a.undo) << "it answered: nothing to undo";
}

TEST(AcquireLoop, APrimitiveWithoutChannelOnlySleeps) {
  AcquireLoop loop(std::nullopt, 100ms, false);
  loop.start();
  const Actions a = loop.on_reply(Attempt::contended(40ms), t0);
  EXPECT_FALSE(a.subscribe);
  EXPECT_EQ(a.sleep_until, t0 + 41ms);
}

// --- wake policies ---------------------------------------------------------

class CountingWaiter final : public Waiter {
 public:
  explicit CountingWaiter(Wake p) { policy = p; }
  void wake() override { ++wakes; }
  void fail(std::error_code, std::string) override {}
  int wakes = 0;
};

std::vector<std::shared_ptr<CountingWaiter>> fill(WaitQueue& q, Wake policy, int n) {
  std::vector<std::shared_ptr<CountingWaiter>> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(std::make_shared<CountingWaiter>(policy));
    q.push(out.back());
  }
  return out;
}

TEST(WaitQueue, OneWakesOnlyTheOldestWaiterNotYetSignaled) {
  WaitQueue q;
  auto w = fill(q, Wake::one, 3);
  auto first = q.on_message("0");
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0], w[0]);
  auto second = q.on_message("0");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0], w[1]) << "a signaled waiter is not chosen twice";
}

TEST(WaitQueue, AWakeUpForAWaiterThatHasLeftPassesOn) {
  WaitQueue q;
  auto w = fill(q, Wake::one, 2);
  ASSERT_EQ(q.on_message("0").size(), 1u);
  EXPECT_TRUE(q.remove(w[0].get())) << "it left without acting on its wake-up";
  auto passed = q.on_message("1");
  ASSERT_EQ(passed.size(), 1u);
  EXPECT_EQ(passed[0], w[1]);
}

TEST(WaitQueue, AWaiterThatLeavesUnsignaledHasNothingToPassOn) {
  WaitQueue q;
  auto w = fill(q, Wake::one, 1);
  EXPECT_FALSE(q.remove(w[0].get()));
  EXPECT_TRUE(q.empty());
}

TEST(WaitQueue, CountInPayloadWakesExactlyThatMany) {
  WaitQueue q;
  auto w = fill(q, Wake::count_in_payload, 5);
  auto three = q.on_message("3");
  ASSERT_EQ(three.size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(three[static_cast<std::size_t>(i)], w[static_cast<std::size_t>(i)]);
  EXPECT_EQ(q.on_message("3").size(), 2u) << "only two were left unsignaled";
  EXPECT_TRUE(q.on_message("1").empty());
}

TEST(WaitQueue, CountInPayloadWakesNobodyForAPayloadThatIsNotAPositiveCount) {
  WaitQueue q;
  fill(q, Wake::count_in_payload, 2);
  EXPECT_TRUE(q.on_message("0").empty());
  EXPECT_TRUE(q.on_message("-2").empty());
  EXPECT_TRUE(q.on_message("x").empty());
}

TEST(WaitQueue, WakeAllWakesEveryone) {
  WaitQueue q;
  auto w = fill(q, Wake::all, 4);
  EXPECT_EQ(q.on_message("0").size(), 4u);
  for (auto& waiter : w) EXPECT_TRUE(waiter->signaled);
}

}  // namespace
}  // namespace distlock::sync
