// The pure parts of run/status --redlock: the node list and the verdict over
// the nodes' answers. No server.
#include <gtest/gtest.h>

#include "redlock_nodes.hpp"
#include "redlock_status.hpp"

namespace distlock::cli {
namespace {

NodeReport holding(const std::string& token) {
  NodeReport n;
  n.reachable = true;
  n.exists = true;
  n.type = "string";
  n.token = token;
  n.ttl_ms = 1000;
  return n;
}

NodeReport empty_node() {
  NodeReport n;
  n.reachable = true;
  n.type = "none";
  return n;
}

NodeReport silent() {
  NodeReport n;
  n.error = "connect timed out";
  return n;
}

TEST(RedlockStatusSummary, AMajorityOfOneTokenIsLocked) {
  const auto s = summarize("x", {holding("a"), holding("a"), holding("a"), empty_node(), silent()});
  EXPECT_EQ(s.majority, 3u);
  EXPECT_EQ(s.held_on, 3u);
  EXPECT_EQ(s.unreachable, 1u);
  EXPECT_EQ(s.state, "locked");
}

TEST(RedlockStatusSummary, KeysWithDifferentTokensAreNotOneHold) {
  const auto s =
      summarize("x", {holding("a"), holding("a"), holding("b"), holding("b"), empty_node()});
  EXPECT_EQ(s.held_on, 2u);
  EXPECT_EQ(s.state, "not locked");
}

TEST(RedlockStatusSummary, ItIsUnknownWhenTheSilentNodesCouldMakeAMajority) {
  // Two silent nodes and no key elsewhere: no token can have three.
  EXPECT_EQ(summarize("x", {empty_node(), empty_node(), empty_node(), silent(), silent()}).state,
            "not locked");
  // One key and two silent nodes: they may hold the same token.
  EXPECT_EQ(summarize("x", {holding("a"), empty_node(), empty_node(), silent(), silent()}).state,
            "unknown");
}

TEST(RedlockStatusSummary, AKeyOfAnotherTypeDoesNotCount) {
  NodeReport hash = holding("");
  hash.type = "hash";
  const auto s = summarize("x", {hash, hash, hash});
  EXPECT_EQ(s.held_on, 0u);
  EXPECT_EQ(s.state, "not locked");
}

TEST(RedlockStatusSummary, TwoNodesNeedBoth) {
  EXPECT_EQ(summarize("x", {holding("a"), empty_node()}).state, "not locked");
  EXPECT_EQ(summarize("x", {holding("a"), holding("a")}).state, "locked");
}

TEST(RedlockStatusSummary, TheJsonHasTheVerdictAndEveryNode) {
  auto node = holding("t");
  node.address = "127.0.0.1:1";
  const std::string json = to_json(summarize("x", {node}));
  EXPECT_EQ(json,
            "{\"name\":\"x\",\"kind\":\"redlock\",\"state\":\"locked\",\"locked\":true,"
            "\"held_on\":1,\"size\":1,\"majority\":1,\"unreachable\":0,\"nodes\":[{\"address\":"
            "\"127.0.0.1:1\",\"reachable\":true,\"exists\":true,\"type\":\"string\",\"token\":"
            "\"t\",\"ttl_ms\":1000}]}");
}

TEST(RedlockNodeList, CommaSeparatedUrisParseInOrderWithTheirAddresses) {
  std::string error;
  const auto nodes = parse_redlock_nodes(
      "redis://127.0.0.1:7001,redis://:pw@[::1]:7002,unix:///tmp/r.sock", error);
  ASSERT_TRUE(nodes) << error;
  EXPECT_EQ(nodes->addresses,
            (std::vector<std::string>{"127.0.0.1:7001", "[::1]:7002", "unix:/tmp/r.sock"}));
  EXPECT_EQ(nodes->uris.size(), 3u);
}

TEST(RedlockNodeList, AnEmptyListOrEntryIsRefused) {
  std::string error;
  EXPECT_FALSE(parse_redlock_nodes("", error));
  EXPECT_NE(error.find("empty"), std::string::npos);
  EXPECT_FALSE(parse_redlock_nodes("redis://a:1,,redis://b:1", error));
  EXPECT_NE(error.find("#2 is empty"), std::string::npos) << error;
}

TEST(RedlockNodeList, TheSameServerTwiceIsRefusedWhateverTheDbOrPassword) {
  std::string error;
  EXPECT_FALSE(parse_redlock_nodes("redis://h:1/0,redis://:secret@h:1/2", error));
  EXPECT_NE(error.find("#2 names the same server as node URI #1 (h:1)"), std::string::npos)
      << error;
  EXPECT_EQ(error.find("secret"), std::string::npos) << error;
}

TEST(RedlockNodeList, AUriThatDoesNotParseIsNamedWithoutItsPassword) {
  std::string error;
  EXPECT_FALSE(parse_redlock_nodes("redis://h:1,redis://:secret@h:99999", error));
  EXPECT_NE(error.find("#2 does not parse"), std::string::npos) << error;
  EXPECT_EQ(error.find("secret"), std::string::npos) << error;
}

TEST(RedlockNodeList, AClusterOrSentinelUriIsNotANode) {
  std::string error;
  EXPECT_FALSE(parse_redlock_nodes("redis://h:1,redis-cluster://h:2", error));
  EXPECT_NE(error.find("#2 is not a single server"), std::string::npos) << error;
}

}  // namespace
}  // namespace distlock::cli
