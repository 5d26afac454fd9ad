// The connection's request pipeline, driven by RESP bytes through the
// decoder and a manual clock: no server, no socket, no sleeps.
#include "net/connection_pipeline.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "distlock/error.hpp"
#include "resp/decoder.hpp"
#include "resp/encoder.hpp"

namespace distlock {

// Internal linkage: each test file may print Values its own way.
static void PrintTo(const Value& value, std::ostream* os) {
  *os << value.to_string();
}

namespace net {
namespace {

using namespace std::chrono_literals;
using Match = ConnectionPipeline::Match;

const Clock::time_point t0{std::chrono::hours(1)};  // the manual clock's start

// Records every outcome it is given; a request must get exactly one.
class Recorder final : public Completion {
 public:
  void complete(std::error_code e, Value v) override {
    ++calls;
    ec = e;
    reply = std::move(v);
  }
  int calls = 0;
  std::error_code ec;
  Value reply;
};

ConnectionPipeline::Hooks readonly_hook(std::function<void()> on_readonly) {
  ConnectionPipeline::Hooks hooks;
  hooks.on_readonly = std::move(on_readonly);
  return hooks;
}

ConnectionPipeline::Hooks push_hook(bool subscriber, std::function<void(Value)> on_push) {
  ConnectionPipeline::Hooks hooks;
  hooks.take_pushes = subscriber;
  hooks.on_push = std::move(on_push);
  return hooks;
}

std::string command(std::initializer_list<std::string_view> args) {
  std::string out;
  resp::encode_command(out, args);
  return out;
}

// Submits one request due at `deadline` and moves it to the unsent queue.
void queue(ConnectionPipeline& p,
           std::string payload,
           Recorder& r,
           std::uint32_t replies = 1,
           Clock::time_point deadline = t0 + 5s) {
  bool wake = false;
  ASSERT_FALSE(p.submit({std::move(payload), replies, &r, deadline, {}}, 100, wake));
  p.take_submitted();
}

std::string writes(ConnectionPipeline& p) {
  std::string out;
  p.take_writes(out);
  return out;
}

// Decodes `bytes` as the server's reply stream and hands each reply over.
std::vector<Match> feed(ConnectionPipeline& p, std::string_view bytes) {
  resp::Decoder decoder;
  decoder.feed(bytes.data(), bytes.size());
  std::vector<Match> matches;
  for (;;) {
    std::error_code ec;
    auto reply = decoder.next(ec);
    EXPECT_FALSE(ec) << decoder.last_error();
    if (!reply) break;
    matches.push_back(p.on_reply(std::move(*reply)));
  }
  return matches;
}

TEST(ConnectionPipeline, RequestsAreWrittenAsOneBatchAndAnsweredInOrder) {
  ConnectionPipeline p({});
  Recorder get_a, get_b, incr;
  queue(p, command({"GET", "a"}), get_a);
  queue(p, command({"GET", "b"}), get_b);
  queue(p, command({"INCR", "n"}), incr);
  EXPECT_EQ(writes(p), command({"GET", "a"}) + command({"GET", "b"}) + command({"INCR", "n"}));
  EXPECT_EQ(writes(p), "") << "each request is written once";

  feed(p, "$1\r\nA\r\n$-1\r\n:3\r\n");
  EXPECT_EQ(get_a.reply, Value::bulk_string("A"));
  EXPECT_TRUE(get_b.reply.is_nil());
  EXPECT_EQ(incr.reply, Value::integer(3));
  EXPECT_EQ(get_a.calls + get_b.calls + incr.calls, 3);
  EXPECT_EQ(p.outstanding(), 0u);
}

TEST(ConnectionPipeline, ARequestNotYetWrittenIsNotAnsweredByAReply) {
  ConnectionPipeline p({});
  Recorder written, unsent;
  queue(p, command({"PING"}), written);
  writes(p);
  queue(p, command({"PING"}), unsent);
  EXPECT_EQ(feed(p, "+PONG\r\n+PONG\r\n"), (std::vector{Match::request, Match::unexpected}));
  EXPECT_EQ(written.calls, 1);
  EXPECT_EQ(unsent.calls, 0);
}

TEST(ConnectionPipeline, AnErrorReplyCompletesItsRequestWithTheErrorValueAndNoErrorCode) {
  ConnectionPipeline p({});
  Recorder r;
  queue(p, command({"INCR", "s"}), r);
  writes(p);
  feed(p, "-ERR value is not an integer or out of range\r\n");
  EXPECT_FALSE(r.ec);
  EXPECT_EQ(r.reply, Value::error("ERR value is not an integer or out of range"));
}

TEST(ConnectionPipeline, ARequestExpectingTwoRepliesGetsBothAsOneArray) {
  ConnectionPipeline p({});
  Recorder asking_call, next;
  queue(p, command({"ASKING"}) + command({"EVALSHA", "abc", "1", "k"}), asking_call, 2);
  queue(p, command({"PING"}), next);
  writes(p);

  feed(p, "+OK\r\n");
  EXPECT_EQ(asking_call.calls, 0) << "one of its two replies has come";
  feed(p, ":1\r\n+PONG\r\n");
  EXPECT_EQ(asking_call.reply, Value::array({Value::simple_string("OK"), Value::integer(1)}));
  EXPECT_EQ(next.reply, Value::simple_string("PONG"));
}

TEST(ConnectionPipeline, AReadonlyReplyRunsTheHookThenCompletesWithConnectionLost) {
  std::vector<std::string> events;
  Recorder r;
  ConnectionPipeline p(readonly_hook([&] { events.push_back("hook:" + std::to_string(r.calls)); }));
  queue(p, command({"EVALSHA", "abc", "1", "k"}), r);
  writes(p);
  feed(p, "-READONLY You can't write against a read only replica.\r\n");
  EXPECT_EQ(events, std::vector<std::string>{"hook:0"}) << "the hook runs before the completion";
  EXPECT_EQ(r.ec, errc::connection_lost);
  EXPECT_TRUE(r.reply.is_nil());
}

TEST(ConnectionPipeline, AReadonlyReplyIsAnOrdinaryErrorReplyWithoutTheHook) {
  ConnectionPipeline p({});
  Recorder r;
  queue(p, command({"SET", "k", "v"}), r);
  writes(p);
  feed(p, "-READONLY You can't write against a read only replica.\r\n");
  EXPECT_FALSE(r.ec);
  EXPECT_TRUE(r.reply.is_error());
}

TEST(ConnectionPipeline, AReadonlyReplyInsideATwoReplyRequestIsPartOfItsArray) {
  int hooks = 0;
  ConnectionPipeline p(readonly_hook([&] { ++hooks; }));
  Recorder r;
  queue(p, command({"ASKING"}) + command({"SET", "k", "v"}), r, 2);
  writes(p);
  feed(p, "+OK\r\n-READONLY You can't write against a read only replica.\r\n");
  EXPECT_EQ(hooks, 0);
  EXPECT_FALSE(r.ec);
  ASSERT_TRUE(r.reply.is_array());
  EXPECT_TRUE(r.reply.as_array()[1].is_error());
}

TEST(ConnectionPipeline, ASubscriberHandsMessagesToThePushHookBetweenReplies) {
  std::vector<Value> pushes;
  ConnectionPipeline p(push_hook(true, [&](Value v) { pushes.push_back(v); }));
  Recorder subscribe, ping;
  queue(p, command({"SUBSCRIBE", "ch"}), subscribe);
  queue(p, command({"PING"}), ping);
  writes(p);

  const auto matches = feed(p,
                            "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
                            "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
                            "*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$2\r\nho\r\n"
                            "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
  EXPECT_EQ(matches, (std::vector{Match::request, Match::push, Match::push, Match::request}));
  ASSERT_EQ(pushes.size(), 2u);
  EXPECT_EQ(pushes[0].as_array()[2], Value::bulk_string("hi"));
  EXPECT_EQ(pushes[1].as_array()[3], Value::bulk_string("ho"));
  EXPECT_EQ(subscribe.reply.as_array()[0], Value::bulk_string("subscribe"));
  EXPECT_EQ(ping.reply.as_array()[0], Value::bulk_string("pong"));
}

TEST(ConnectionPipeline, ADataConnectionTakesAMessageShapedArrayAsAReply) {
  int pushes = 0;
  ConnectionPipeline p(push_hook(false, [&](Value) { ++pushes; }));
  Recorder r;
  queue(p, command({"LRANGE", "l", "0", "-1"}), r);
  writes(p);
  EXPECT_EQ(feed(p, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"),
            std::vector{Match::request});
  EXPECT_EQ(pushes, 0);
  EXPECT_EQ(r.calls, 1);
}

TEST(ConnectionPipeline, AReplyNobodyAskedForIsUnexpected) {
  ConnectionPipeline p(push_hook(true, nullptr));
  EXPECT_EQ(feed(p, "+OK\r\n"), std::vector{Match::unexpected});
  EXPECT_EQ(feed(p, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"), std::vector{Match::push})
      << "a push with no hook is dropped, not unexpected";
}

TEST(ConnectionPipeline, AResp3PushFrameNeverReachesThePipelineSinceTheConnectionSpeaksResp2) {
  resp::Decoder decoder;
  const std::string_view push = ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n";
  decoder.feed(push.data(), push.size());
  std::error_code ec;
  EXPECT_FALSE(decoder.next(ec).has_value());
  EXPECT_EQ(ec, errc::protocol_error) << "the connection drops on it";
}

TEST(ConnectionPipeline, ARequestInFlightTimesOutAtItsDeadlineAndItsLateReplyIsDiscarded) {
  ConnectionPipeline p({});
  Recorder slow, next;
  queue(p, command({"GET", "slow"}), slow, 1, t0 + 1s);
  queue(p, command({"GET", "next"}), next, 1, t0 + 5s);
  writes(p);

  p.expire(t0 + 999ms);
  EXPECT_EQ(slow.calls, 0);
  p.expire(t0 + 1s);
  EXPECT_EQ(slow.ec, errc::timeout);
  EXPECT_EQ(p.outstanding(), 2u) << "its reply is still on its way";
  EXPECT_EQ(p.next_deadline(), t0 + 5s);

  feed(p, "$4\r\nlate\r\n$4\r\nmine\r\n");
  EXPECT_EQ(slow.calls, 1) << "the late reply completes nothing";
  EXPECT_EQ(next.reply, Value::bulk_string("mine"));
  EXPECT_EQ(p.outstanding(), 0u);
}

TEST(ConnectionPipeline, ATwoReplyRequestThatTimedOutDiscardsBothLateReplies) {
  ConnectionPipeline p({});
  Recorder asking_call, next;
  queue(p, command({"ASKING"}) + command({"GET", "k"}), asking_call, 2, t0 + 1s);
  queue(p, command({"PING"}), next, 1, t0 + 5s);
  writes(p);
  p.expire(t0 + 2s);
  feed(p, "+OK\r\n$1\r\nv\r\n+PONG\r\n");
  EXPECT_EQ(asking_call.calls, 1);
  EXPECT_EQ(asking_call.ec, errc::timeout);
  EXPECT_EQ(next.reply, Value::simple_string("PONG"));
}

TEST(ConnectionPipeline, ARequestThatTimesOutBeforeItIsWrittenIsNeverSent) {
  ConnectionPipeline p({});
  Recorder early, later;
  queue(p, command({"GET", "early"}), early, 1, t0 + 1s);
  queue(p, command({"GET", "later"}), later, 1, t0 + 5s);
  p.expire(t0 + 1s);
  EXPECT_EQ(early.ec, errc::timeout);
  EXPECT_EQ(p.outstanding(), 1u);
  EXPECT_EQ(writes(p), command({"GET", "later"}));
}

TEST(ConnectionPipeline, TheNextDeadlineIsTheEarliestOfTheRequestsNotCompleted) {
  ConnectionPipeline p({});
  EXPECT_EQ(p.next_deadline(), Clock::time_point::max()) << "nothing to wait for";
  Recorder a, b, c;
  queue(p, command({"PING"}), a, 1, t0 + 3s);
  writes(p);
  queue(p, command({"PING"}), b, 1, t0 + 2s);
  queue(p, command({"PING"}), c, 1, t0 + 4s);
  EXPECT_EQ(p.next_deadline(), t0 + 2s) << "unsent requests count too";
  p.expire(t0 + 2s);
  EXPECT_EQ(p.next_deadline(), t0 + 3s);
  p.expire(t0 + 3s);
  EXPECT_EQ(p.next_deadline(), t0 + 4s) << "a timed-out request in flight has no deadline left";
}

TEST(ConnectionPipeline, AConnectionLossCompletesEveryPendingRequestOnceWithConnectionLost) {
  ConnectionPipeline p({});
  Recorder timed_out, in_flight, unsent, submitted;
  queue(p, command({"GET", "a"}), timed_out, 1, t0 + 1s);
  queue(p, command({"GET", "b"}), in_flight);
  writes(p);
  p.expire(t0 + 1s);
  queue(p, command({"GET", "c"}), unsent);
  bool wake = false;
  ASSERT_FALSE(p.submit({command({"GET", "d"}), 1, &submitted, t0 + 5s, {}}, 100, wake));

  p.fail_all(errc::connection_lost);
  EXPECT_EQ(timed_out.calls, 1) << "not completed a second time";
  EXPECT_EQ(timed_out.ec, errc::timeout);
  for (Recorder* r : {&in_flight, &unsent, &submitted}) {
    EXPECT_EQ(r->calls, 1);
    EXPECT_EQ(r->ec, errc::connection_lost);
  }
  EXPECT_EQ(p.outstanding(), 0u);
  EXPECT_EQ(writes(p), "") << "nothing pending is re-sent on the next connection";
  EXPECT_EQ(feed(p, "$1\r\nb\r\n"), std::vector{Match::unexpected})
      << "a reply from before the loss answers nothing";
}

TEST(ConnectionPipeline, TheHandshakeIsAnsweredBeforeRequestsThatQueuedWhileConnecting) {
  ConnectionPipeline p({});
  Recorder queued, handshake;
  queue(p, command({"GET", "k"}), queued);
  EXPECT_EQ(p.prepend({command({"PING"}), 1, &handshake, Clock::time_point::max(), {}}),
            command({"PING"}));
  EXPECT_EQ(p.outstanding(), 2u);
  feed(p, "+PONG\r\n");
  EXPECT_EQ(handshake.reply, Value::simple_string("PONG"));
  EXPECT_EQ(queued.calls, 0) << "not written yet";
  EXPECT_EQ(writes(p), command({"GET", "k"}));
}

TEST(ConnectionPipeline, SubmitWakesTheIoThreadOncePerBatch) {
  ConnectionPipeline p({});
  Recorder a, b, c;
  bool wake = false;
  EXPECT_FALSE(p.submit({"a", 1, &a, t0, {}}, 100, wake));
  EXPECT_TRUE(wake);
  EXPECT_FALSE(p.submit({"b", 1, &b, t0, {}}, 100, wake));
  EXPECT_FALSE(wake) << "a wake-up is already on its way";
  p.take_submitted();
  EXPECT_FALSE(p.submit({"c", 1, &c, t0, {}}, 100, wake));
  EXPECT_TRUE(wake);
}

TEST(ConnectionPipeline, SubmitFailsWithQueueFullAtTheLimitAndWithClosedAfterTheIntakeCloses) {
  ConnectionPipeline p({});
  Recorder a, b;
  bool wake = false;
  EXPECT_FALSE(p.submit({"a", 1, &a, t0, {}}, 1, wake));
  EXPECT_EQ(p.submit({"b", 1, &b, t0, {}}, 1, wake), errc::queue_full);
  EXPECT_TRUE(p.close_intake());
  EXPECT_FALSE(p.close_intake()) << "closed already";
  EXPECT_EQ(p.submit({"b", 1, &b, t0, {}}, 100, wake), errc::closed);
  EXPECT_FALSE(wake);
  EXPECT_EQ(b.calls, 0) << "a refused request's completion never runs";
}

}  // namespace
}  // namespace net
}  // namespace distlock
