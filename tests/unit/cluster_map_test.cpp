// The Cluster's slot map parsed from CLUSTER SHARDS and CLUSTER SLOTS replies
// as a server sends them (RESP2 bytes), and when SLOTS is asked instead.
#include "topology/cluster_map.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "resp/decoder.hpp"

namespace distlock::topology {
namespace {

// RESP2 bytes, built up from parts.
std::string bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}
std::string integer(long long n) {
  return ":" + std::to_string(n) + "\r\n";
}
std::string array(std::initializer_list<std::string> items) {
  std::string out = "*" + std::to_string(items.size()) + "\r\n";
  for (const auto& i : items) out += i;
  return out;
}

Value decoded(const std::string& bytes) {
  resp::Decoder decoder;
  decoder.feed(bytes.data(), bytes.size());
  std::error_code ec;
  auto value = decoder.next(ec);
  EXPECT_TRUE(value.has_value()) << ec.message();
  return value.value_or(Value());
}

// One node of a CLUSTER SHARDS shard, as Redis 7 lists it.
std::string shard_node(const std::string& ip,
                       const std::string& endpoint,
                       long long port,
                       const std::string& role,
                       const std::string& health) {
  return array({bulk("id"), bulk("e3c5..."), bulk("port"), integer(port), bulk("ip"), bulk(ip),
                bulk("endpoint"), bulk(endpoint), bulk("role"), bulk(role),
                bulk("replication-offset"), integer(72156), bulk("health"), bulk(health)});
}

std::string shard(long long first, long long last, std::initializer_list<std::string> nodes) {
  std::string list = "*" + std::to_string(nodes.size()) + "\r\n";
  for (const auto& n : nodes) list += n;
  return array({bulk("slots"), array({integer(first), integer(last)}), bulk("nodes"), list});
}

TEST(ClusterMap, ShardsGiveEachShardsOnlineMasterItsSlots) {
  const auto ranges = parse_cluster_map(
      decoded(array({
          shard(0, 8191,
                {shard_node("127.0.0.1", "127.0.0.1", 30002, "replica", "online"),
                 shard_node("127.0.0.1", "127.0.0.1", 30001, "master", "online")}),
          shard(8192, 16383, {shard_node("10.0.0.2", "10.0.0.2", 30003, "master", "online")}),
      })),
      true);
  ASSERT_TRUE(ranges.has_value());
  ASSERT_EQ(ranges->size(), 2u);
  EXPECT_EQ((*ranges)[0].first, 0);
  EXPECT_EQ((*ranges)[0].last, 8191);
  EXPECT_EQ((*ranges)[0].host, "127.0.0.1");
  EXPECT_EQ((*ranges)[0].port, 30001) << "the replica is not the slots' master";
  EXPECT_EQ((*ranges)[1].host, "10.0.0.2");
  EXPECT_EQ(first_uncovered_slot(*ranges), std::nullopt);
}

TEST(ClusterMap, AShardWhoseMasterFailedLeavesItsSlotsUncovered) {
  const auto ranges = parse_cluster_map(
      decoded(array({
          shard(0, 99, {shard_node("127.0.0.1", "127.0.0.1", 30001, "master", "fail")}),
          shard(100, 16383, {shard_node("127.0.0.1", "127.0.0.1", 30002, "master", "online")}),
      })),
      true);
  ASSERT_TRUE(ranges.has_value());
  ASSERT_EQ(ranges->size(), 1u);
  EXPECT_EQ(first_uncovered_slot(*ranges), 0);
}

TEST(ClusterMap, AShardsNodeWithoutAnIpIsReachedAtItsEndpoint) {
  const auto ranges = parse_cluster_map(
      decoded(array(
          {shard(0, 16383, {shard_node("", "redis-1.example.com", 6379, "master", "online")})})),
      true);
  ASSERT_TRUE(ranges.has_value());
  ASSERT_EQ(ranges->size(), 1u);
  EXPECT_EQ((*ranges)[0].host, "redis-1.example.com");
}

TEST(ClusterMap, SlotsGiveEachRangeItsFirstListedNodeAsMaster) {
  const auto ranges = parse_cluster_map(
      decoded(array({
          array({integer(0), integer(5460), array({bulk("127.0.0.1"), integer(30001), bulk("a")}),
                 array({bulk("127.0.0.1"), integer(30004), bulk("b")})}),
          array({integer(5461), integer(16383), array({bulk("?"), integer(30002), bulk("c")})}),
      })),
      false);
  ASSERT_TRUE(ranges.has_value());
  ASSERT_EQ(ranges->size(), 2u);
  EXPECT_EQ((*ranges)[0].port, 30001);
  EXPECT_EQ((*ranges)[1].first, 5461);
  EXPECT_EQ((*ranges)[1].host, "?") << "the hostname placeholder is taken as it comes";
  EXPECT_EQ(first_uncovered_slot(*ranges), std::nullopt);
}

TEST(ClusterMap, SlotsWithANilEndpointOrASlotOutOfRangeDoNotParse) {
  EXPECT_EQ(
      parse_cluster_map(
          decoded(array({array({integer(0), integer(16383), array({"$-1\r\n", integer(30001)})})})),
          false),
      std::nullopt);
  EXPECT_EQ(
      parse_cluster_map(
          decoded(array({array({integer(0), integer(16384), array({bulk("h"), integer(30001)})})})),
          false),
      std::nullopt);
  EXPECT_EQ(parse_cluster_map(decoded("-ERR nope\r\n"), false), std::nullopt);
  EXPECT_EQ(parse_cluster_map(decoded("-ERR nope\r\n"), true), std::nullopt);
}

TEST(ClusterMap, SlotsIsAskedInsteadWhenShardsIsUnknownOrDeniedByAnAcl) {
  EXPECT_TRUE(
      cluster_slots_instead(decoded("-ERR unknown subcommand 'shards'. Try CLUSTER HELP.\r\n")));
  EXPECT_TRUE(cluster_slots_instead(decoded(
      "-ERR Unknown subcommand or wrong number of arguments for 'SHARDS'. Try CLUSTER HELP.\r\n")));
  EXPECT_TRUE(cluster_slots_instead(decoded("-ERR unknown command 'CLUSTER'\r\n")));
  EXPECT_TRUE(cluster_slots_instead(
      decoded("-NOPERM User app has no permissions to run the 'cluster|shards' command\r\n")));
}

TEST(ClusterMap, SlotsIsNotAskedForAnyOtherReply) {
  EXPECT_FALSE(
      cluster_slots_instead(decoded("-ERR This instance has cluster support disabled\r\n")));
  EXPECT_FALSE(cluster_slots_instead(decoded("-LOADING Redis is loading the dataset\r\n")));
  EXPECT_FALSE(cluster_slots_instead(decoded("*0\r\n")));
  EXPECT_FALSE(cluster_slots_instead(decoded("$16\r\nunknown command!\r\n")));
}

}  // namespace
}  // namespace distlock::topology
