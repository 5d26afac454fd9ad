// ClientOptions::from_uri for the Cluster and Sentinel forms (issue 13,
// item 1): seeds, master name, sentinel credentials, and the malformed ones.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distlock/client_options.hpp"
#include "distlock/error.hpp"

namespace distlock {
namespace {

using Deployment = ClientOptions::Deployment;

std::vector<std::string> seeds_of(const ClientOptions& o) {
  std::vector<std::string> out;
  for (const auto& s : o.seeds) out.push_back(s.host + ":" + std::to_string(s.port));
  return out;
}

TEST(ClusterUri, ListsEverySeedWithThePortsDefaultingTo6379) {
  const auto o =
      ClientOptions::from_uri("redis-cluster://a:7000,b,[::1]:7002?command_timeout_ms=900");
  EXPECT_EQ(o.deployment, Deployment::cluster);
  EXPECT_EQ(seeds_of(o), (std::vector<std::string>{"a:7000", "b:6379", "::1:7002"}));
  EXPECT_EQ(o.host, "a");
  EXPECT_EQ(o.port, 7000);
  EXPECT_EQ(o.command_timeout.count(), 900);
  EXPECT_FALSE(o.tls.enabled);
}

TEST(ClusterUri, CarriesCredentialsAndTlsLikeRedisUris) {
  const auto o = ClientOptions::from_uri("rediss-cluster://app:s%40cret@h1:1,h2:2");
  EXPECT_EQ(o.deployment, Deployment::cluster);
  EXPECT_TRUE(o.tls.enabled);
  EXPECT_EQ(o.username, "app");
  EXPECT_EQ(o.password, "s@cret");
  EXPECT_EQ(o.seeds.size(), 2u);
}

TEST(SentinelUri, ListsTheSentinelsWithPortsDefaultingTo26379AndTheMasterNameAndDb) {
  const auto o = ClientOptions::from_uri(
      "redis-sentinel://:pw@s1,s2:26380/mymaster/2?sentinel_username=sen&sentinel_password=spw");
  EXPECT_EQ(o.deployment, Deployment::sentinel);
  EXPECT_EQ(seeds_of(o), (std::vector<std::string>{"s1:26379", "s2:26380"}));
  EXPECT_EQ(o.sentinel_master, "mymaster");
  EXPECT_EQ(o.db, 2);
  EXPECT_EQ(o.password, "pw");
  EXPECT_EQ(o.sentinel_username, "sen");
  EXPECT_EQ(o.sentinel_password, "spw");
}

TEST(TopologyUri, PlainRedisUrisStayStandaloneWithNoSeeds) {
  const auto o = ClientOptions::from_uri("redis://h:1");
  EXPECT_EQ(o.deployment, Deployment::standalone);
  EXPECT_TRUE(o.seeds.empty());
}

// Each malformed URI: Error(invalid_argument) whose message names the problem.
TEST(TopologyUri, RejectsMalformedClusterAndSentinelUrisNamingTheProblem) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"redis-cluster://", "empty host list"},
      {"redis-sentinel:///mymaster", "empty sentinel list"},
      {"redis-cluster://a:1,,b:2", "empty entry"},
      {"redis-cluster://a:1,a:1", "given twice"},
      {"redis-cluster://a,a:6379", "given twice"},
      {"redis-sentinel://s1:1,s2:2", "missing master name"},
      {"redis-sentinel://s1:1/", "missing master name"},
      {"redis-sentinel://s1:1/my%20master", "space"},
      {"redis-cluster://a:1/3", "only database 0"},
      {"redis-cluster://a:1?db=3", "only database 0"},
      {"redis-cluster://a:1?sentinel_password=x", "requires a redis-sentinel"},
      {"redis-cluster://a:99999", "out of range"},
      {"redis-clusters://a:1", "unknown scheme"},
      {"unix-cluster://a:1", "unknown scheme"},
      {"redis-cluster://a:1?verify_peer=true", "requires the rediss"},
  };
  for (const auto& [uri, problem] : bad) {
    try {
      ClientOptions::from_uri(uri);
      ADD_FAILURE() << uri << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), errc::invalid_argument) << uri;
      EXPECT_NE(std::string(e.what()).find(problem), std::string::npos) << uri << ": " << e.what();
    }
  }
}

TEST(TopologyUri, NeverShowsTheSentinelPasswordInAMessage) {
  try {
    ClientOptions::from_uri("redis-sentinel://s1/m?sentinel_password=hunter2&nope=1");
    FAIL() << "an unknown option was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace distlock
