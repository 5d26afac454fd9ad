// How a Redlock group's answers become one reply (topology/quorum_rule,
// sync/redlock_rules), and the dedup of a release heard from every node: on
// plain answers, no server.
#include <gtest/gtest.h>

#include <vector>

#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/redlock_primitive.hpp"
#include "sync/redlock_rules.hpp"
#include "topology/quorum.hpp"
#include "topology/quorum_rule.hpp"

namespace distlock::topology {
namespace {

NodeAnswer reply(Value v) {
  return {true, {}, std::move(v)};
}
NodeAnswer integer(std::int64_t v) {
  return reply(Value::integer(v));
}
NodeAnswer failed() {
  return {true, make_error_code(errc::timeout), Value()};
}
NodeAnswer silent() {
  return {};
}
NodeAnswer took() {
  return reply(Value());
}

TEST(RedlockAcquireRule, AMajorityOfSetTokensIsHeldAndSendsNoUndo) {
  const auto rule = sync::redlock_acquire_rule();
  const std::vector<NodeAnswer> a{took(), took(), took(), integer(500), silent()};
  EXPECT_TRUE(rule->settled(a, 3));
  const Verdict v = rule->verdict(a, 3);
  EXPECT_FALSE(v.ec);
  EXPECT_TRUE(v.reply.is_nil());
  const std::vector<std::string> keys{"k"}, args{"30000", "tok"};
  EXPECT_TRUE(rule->follow_up(v, keys, args).empty());
}

TEST(RedlockAcquireRule, TwoOfFiveIsContentionRetriedAfterTheShortestTtlAndUndoneEverywhere) {
  const auto rule = sync::redlock_acquire_rule();
  const std::vector<NodeAnswer> a{took(), took(), integer(900), integer(400), failed()};
  EXPECT_TRUE(rule->settled(a, 3)) << "three against: a majority can no longer be reached";
  const Verdict v = rule->verdict(a, 3);
  EXPECT_FALSE(v.ec);
  ASSERT_TRUE(v.reply.is_integer());
  EXPECT_EQ(v.reply.as_integer(), 400);
  const std::vector<std::string> keys{"k"}, args{"30000", "tok"};
  const auto undo = rule->follow_up(v, keys, args);
  ASSERT_EQ(undo.size(), 1u);
  EXPECT_EQ(undo[0].script, &script::scripts().simple_release);
  EXPECT_EQ(undo[0].keys, std::vector<std::string>{"k"});
  ASSERT_EQ(undo[0].args.size(), 3u);
  EXPECT_EQ(undo[0].args[0], "tok");
  EXPECT_EQ(undo[0].args[2], sync::redlock_release_tag("tok")) << "not the token itself";
  EXPECT_NE(undo[0].args[2].find("rl:"), std::string::npos);
}

TEST(RedlockAcquireRule, UnsettledWhileAMajorityIsStillPossible) {
  const auto rule = sync::redlock_acquire_rule();
  const std::vector<NodeAnswer> a{took(), took(), integer(900), silent(), silent()};
  EXPECT_FALSE(rule->settled(a, 3));
}

TEST(RedlockAcquireRule, AMajorityOfErrorRepliesIsTheFirstError) {
  const auto rule = sync::redlock_acquire_rule();
  const std::vector<NodeAnswer> a{reply(Value::error("OOM a")), reply(Value::error("OOM b")),
                                  reply(Value::error("OOM c")), took(), took()};
  const Verdict v = rule->verdict(a, 3);
  ASSERT_TRUE(v.reply.is_error());
  EXPECT_EQ(v.reply.as_string(), "OOM a");
}

TEST(RedlockReleaseRule, AMajorityDeletedIsReleasedGoneOnAMajorityIsNotHeldElseUnknown) {
  const auto rule = sync::redlock_release_rule();
  EXPECT_EQ(rule->verdict(std::vector{integer(1), integer(1), integer(1), silent(), silent()}, 3)
                .reply.as_integer(),
            1);
  EXPECT_EQ(
      rule->verdict(std::vector{integer(-1), integer(-1), integer(-1), integer(1), silent()}, 3)
          .reply.as_integer(),
      -1);
  const Verdict unknown =
      rule->verdict(std::vector{integer(1), integer(1), integer(-1), silent(), failed()}, 3);
  EXPECT_EQ(unknown.ec, errc::timeout) << "stays pending and is sent again";
}

TEST(RedlockRenewRule, PerHoldingAMajorityRenewsAMajorityGoneIsTakenTooFewIsLostNow) {
  const auto rule = sync::redlock_renew_rule();
  const auto row = [](std::int64_t a, std::int64_t b) {
    return reply(Value::array({Value::integer(a), Value::integer(b)}));
  };
  // Holding 0 renewed on three; holding 1 gone on three.
  Verdict v = rule->verdict(std::vector{row(1, 0), row(1, 0), row(1, 0), silent(), silent()}, 3);
  ASSERT_TRUE(v.reply.is_array());
  EXPECT_EQ(v.reply.as_array()[0].as_integer(), 1);
  EXPECT_EQ(v.reply.as_array()[1].as_integer(), 0);
  // Two answered: neither can be confirmed on a majority.
  v = rule->verdict(std::vector{row(1, 1), row(1, 1), silent(), failed(), failed()}, 3);
  EXPECT_EQ(v.reply.as_array()[0].as_integer(), -1);
  // What is left of the lost holdings is deleted on every node.
  const std::vector<std::string> keys{"a", "a", "b", "b"};
  const std::vector<std::string> args{"s", "ta", "30000", "s", "tb", "30000"};
  const auto deletes = rule->follow_up(v, keys, args);
  ASSERT_EQ(deletes.size(), 2u);
  EXPECT_EQ(deletes[0].keys, std::vector<std::string>{"a"});
  EXPECT_EQ(deletes[1].args[0], "tb");
  // No node answered at all: nothing is known, the call failed.
  EXPECT_EQ(rule->verdict(std::vector<NodeAnswer>(5), 3).ec, errc::timeout);
}

TEST(QuorumCommandRule, ExistsAndPttlAnswerForTheMajority) {
  const QuorumRule& exists = command_rule("exists");
  EXPECT_EQ(
      exists.verdict(std::vector{integer(1), integer(1), integer(1), integer(0), integer(0)}, 3)
          .reply.as_integer(),
      1);
  EXPECT_EQ(
      exists.verdict(std::vector{integer(1), integer(1), integer(0), integer(0), integer(0)}, 3)
          .reply.as_integer(),
      0);
  EXPECT_EQ(
      exists.verdict(std::vector{integer(1), integer(1), integer(0), failed(), silent()}, 3).ec,
      errc::timeout);
  // The third longest of five: held at least that long on a majority.
  const QuorumRule& pttl = command_rule("PTTL");
  EXPECT_EQ(
      pttl.verdict(std::vector{integer(900), integer(-2), integer(500), integer(-1), integer(700)},
                   3)
          .reply.as_integer(),
      700);
  EXPECT_EQ(
      pttl.verdict(std::vector{integer(900), integer(-2), integer(-2), integer(-2), silent()}, 3)
          .reply.as_integer(),
      -2);
}

TEST(QuorumCommandRule, OtherCommandsNeedAMajorityOfIdenticalReplies) {
  const QuorumRule& get = command_rule("GET");
  const auto s = [](const char* t) { return reply(Value::bulk_string(t)); };
  EXPECT_EQ(get.verdict(std::vector{s("x"), s("x"), s("y"), s("x"), silent()}, 3).reply.as_string(),
            "x");
  EXPECT_EQ(get.verdict(std::vector{s("x"), s("x"), s("y"), s("y"), silent()}, 3).ec,
            errc::timeout);
}

TEST(MessageDedup, AReleaseHeardFromEveryNodeIsDeliveredOnceAndOthersAlways) {
  MessageDedup dedup(4);
  EXPECT_TRUE(dedup.fresh("ch", "rl:1"));
  EXPECT_FALSE(dedup.fresh("ch", "rl:1")) << "the same release from another node";
  EXPECT_TRUE(dedup.fresh("other", "rl:1")) << "another channel";
  EXPECT_TRUE(dedup.fresh("ch", "rl:2")) << "another release";
  EXPECT_TRUE(dedup.fresh("ch", "0"));
  EXPECT_TRUE(dedup.fresh("ch", "0")) << "a peer's untagged message is never dropped";
  for (const char* p : {"rl:3", "rl:4", "rl:5", "rl:6"}) EXPECT_TRUE(dedup.fresh("ch", p));
  EXPECT_TRUE(dedup.fresh("ch", "rl:1")) << "forgotten once out of the window";
}

TEST(MessageDedup, AReleaseIsDeliveredAgainFromTheNodeThatMakesItAMajoritys) {
  MessageDedup dedup(16, 3);  // five nodes
  EXPECT_TRUE(dedup.fresh("ch", "rl:1")) << "the first node: the earliest wake-up";
  EXPECT_FALSE(dedup.fresh("ch", "rl:1"));
  EXPECT_TRUE(dedup.fresh("ch", "rl:1")) << "the third node: released on a majority now";
  EXPECT_FALSE(dedup.fresh("ch", "rl:1"));
  EXPECT_FALSE(dedup.fresh("ch", "rl:1"));
}

TEST(Quorum, HasNoSingleConnectionToTakeOneNodesAnswerForTheMajoritys) {
  asio::io_context io;
  std::vector<ClientOptions> nodes(3);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].host = "127.0.0.1";
    nodes[i].port = static_cast<std::uint16_t>(1 + i);  // never connected: no I/O here
  }
  Quorum quorum(io, nodes, std::chrono::milliseconds(100), {}, {});
  EXPECT_THROW(quorum.data_for("k"), Error);
  EXPECT_THROW(quorum.subscriber_for("c"), Error);
  EXPECT_EQ(quorum.subscribers_for("c").size(), 3u) << "one per node";
  quorum.close();
}

}  // namespace
}  // namespace distlock::topology
