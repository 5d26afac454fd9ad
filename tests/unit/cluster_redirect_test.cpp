// ClusterRedirect: the class of a Cluster node's reply to a routed command,
// decoded from the bytes a server sends; and the transient refusals' backoff.
#include "topology/cluster_redirect.hpp"

#include <gtest/gtest.h>

#include <string>

#include "resp/decoder.hpp"

namespace distlock::topology {
namespace {

using namespace std::chrono_literals;
using Kind = ClusterRedirect::Kind;

Value decoded(const std::string& bytes) {
  resp::Decoder decoder;
  decoder.feed(bytes.data(), bytes.size());
  std::error_code ec;
  auto value = decoder.next(ec);
  EXPECT_TRUE(value.has_value()) << bytes << ": " << ec.message();
  return value.value_or(Value());
}

ClusterRedirect classify(const std::string& bytes) {
  return ClusterRedirect::classify(decoded(bytes));
}

TEST(RedirectClassifier, AMovedReplyNamesTheSlotAndTheNewAddress) {
  const auto r = classify("-MOVED 3999 127.0.0.1:6381\r\n");
  EXPECT_EQ(r.kind, Kind::moved);
  EXPECT_EQ(r.slot, 3999);
  EXPECT_EQ(r.host, "127.0.0.1");
  EXPECT_EQ(r.port, 6381);
  EXPECT_TRUE(r.redirection());
  EXPECT_FALSE(r.transient());
}

TEST(RedirectClassifier, AnAskReplyNamesTheSlotAndTheAddressForThisCommandOnly) {
  const auto r = classify("-ASK 12182 10.0.0.7:7002\r\n");
  EXPECT_EQ(r.kind, Kind::ask);
  EXPECT_EQ(r.slot, 12182);
  EXPECT_EQ(r.host, "10.0.0.7");
  EXPECT_EQ(r.port, 7002);
  EXPECT_TRUE(r.redirection());
}

TEST(RedirectClassifier, AnIpv6AddressAsRedisWritesItSplitsAtTheLastColon) {
  const auto r = classify("-MOVED 3999 ::1:6381\r\n");
  EXPECT_EQ(r.kind, Kind::moved);
  EXPECT_EQ(r.host, "::1");
  EXPECT_EQ(r.port, 6381);
  const auto full = classify("-MOVED 1 2001:db8::8a2e:370:7334:7000\r\n");
  EXPECT_EQ(full.host, "2001:db8::8a2e:370:7334");
  EXPECT_EQ(full.port, 7000);
}

TEST(RedirectClassifier, ABracketedIpv6AddressKeepsItsBracketsAsWritten) {
  // Redis writes IPv6 without brackets; a bracketed one is taken as it comes.
  const auto r = classify("-ASK 3999 [::1]:6381\r\n");
  EXPECT_EQ(r.kind, Kind::ask);
  EXPECT_EQ(r.slot, 3999);
  EXPECT_EQ(r.host, "[::1]");
  EXPECT_EQ(r.port, 6381);
}

TEST(RedirectClassifier, AHostnameIsTheAddressWhenTheClusterPrefersHostnames) {
  const auto r = classify("-MOVED 0 redis-2.cache.example.com:6379\r\n");
  EXPECT_EQ(r.kind, Kind::moved);
  EXPECT_EQ(r.slot, 0);
  EXPECT_EQ(r.host, "redis-2.cache.example.com");
  EXPECT_EQ(r.port, 6379);
}

TEST(RedirectClassifier, AnUnknownEndpointWithAnEmptyHostIsHandedToTheCallerAsAnError) {
  // Redis 7 with cluster-preferred-endpoint-type unknown-endpoint.
  EXPECT_EQ(classify("-MOVED 3999 :6381\r\n").kind, Kind::other_error);
  EXPECT_EQ(classify("-ASK 3999 :6381\r\n").kind, Kind::other_error);
}

TEST(RedirectClassifier, TheQuestionMarkPlaceholderForAMissingHostnameIsTakenAsTheHost) {
  // Redis 7 preferring hostnames for a node that has none sends "?".
  const auto r = classify("-MOVED 3999 ?:6381\r\n");
  EXPECT_EQ(r.kind, Kind::moved);
  EXPECT_EQ(r.host, "?");
  EXPECT_EQ(r.port, 6381);
}

TEST(RedirectClassifier, TheFirstAndLastSlotAndPortAreAccepted) {
  const auto low = classify("-MOVED 0 h:1\r\n");
  EXPECT_EQ(low.kind, Kind::moved);
  EXPECT_EQ(low.slot, 0);
  EXPECT_EQ(low.port, 1);
  const auto high = classify("-ASK 16383 h:65535\r\n");
  EXPECT_EQ(high.kind, Kind::ask);
  EXPECT_EQ(high.slot, 16383);
  EXPECT_EQ(high.port, 65535);
}

TEST(RedirectClassifier, AMalformedMovedOrAskIsAnOtherErrorWithNoAddress) {
  for (const char* bytes : {
           "-MOVED\r\n",                      // nothing after the word
           "-MOVED 3999\r\n",                 // no address
           "-MOVED 3999 127.0.0.1\r\n",       // no port
           "-MOVED 3999:6381\r\n",            // no space before the address
           "-MOVED  3999 h:6381\r\n",         // empty slot
           "-MOVED x h:6381\r\n",             // slot not a number
           "-MOVED 16384 h:6381\r\n",         // slot out of range
           "-MOVED -1 h:6381\r\n",            // negative slot
           "-ASK 3999 h:0\r\n",               // port 0
           "-ASK 3999 h:65536\r\n",           // port out of range
           "-ASK 3999 h:port\r\n",            // port not a number
           "-ASK 3999 h:6381 trailing\r\n",   // text after the port
           "-ASK 3999 h:+6381\r\n",           // a sign is not a digit
           "-moved 3999 127.0.0.1:6381\r\n",  // the code is upper case
           "-MOVED3999 127.0.0.1:6381\r\n",   // the code is a whole word
       }) {
    const auto r = classify(bytes);
    EXPECT_EQ(r.kind, Kind::other_error) << bytes;
    EXPECT_FALSE(r.redirection()) << bytes;
    EXPECT_TRUE(r.host.empty()) << bytes;
    EXPECT_EQ(r.port, 0) << bytes;
  }
}

TEST(RedirectClassifier, EachTransientRefusalIsNamedWithOrWithoutItsText) {
  const std::pair<const char*, Kind> cases[] = {
      {"-TRYAGAIN Multiple keys request during rehashing of slot\r\n", Kind::try_again},
      {"-TRYAGAIN\r\n", Kind::try_again},
      {"-CLUSTERDOWN The cluster is down\r\n", Kind::cluster_down},
      {"-CLUSTERDOWN Hash slot not served\r\n", Kind::cluster_down},
      {"-LOADING Redis is loading the dataset in memory\r\n", Kind::loading},
      {"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n",
       Kind::master_down},
  };
  for (const auto& [bytes, kind] : cases) {
    const auto r = classify(bytes);
    EXPECT_EQ(r.kind, kind) << bytes;
    EXPECT_TRUE(r.transient()) << bytes;
    EXPECT_FALSE(r.redirection()) << bytes;
  }
}

TEST(RedirectClassifier, ARefusalCodeCountsOnlyAsTheWholeFirstWordInUpperCase) {
  EXPECT_EQ(classify("-TRYAGAINX\r\n").kind, Kind::other_error);
  EXPECT_EQ(classify("-tryagain\r\n").kind, Kind::other_error);
  EXPECT_EQ(classify("-ERR TRYAGAIN later\r\n").kind, Kind::other_error);
  EXPECT_EQ(classify("-CLUSTERDOWNS\r\n").kind, Kind::other_error);
}

TEST(RedirectClassifier, AnyOtherErrorReplyIsAnOtherError) {
  for (const char* bytes :
       {"-ERR unknown command 'FOO'\r\n", "-NOSCRIPT No matching script\r\n",
        "-READONLY You can't write against a read only replica.\r\n",
        "-CROSSSLOT Keys in request don't hash to the same slot\r\n", "-ERR\r\n"}) {
    const auto r = classify(bytes);
    EXPECT_EQ(r.kind, Kind::other_error) << bytes;
    EXPECT_FALSE(r.transient()) << bytes;
    EXPECT_FALSE(r.redirection()) << bytes;
  }
}

TEST(RedirectClassifier, AReplyThatIsNotAnErrorIsNotAnErrorEvenIfItReadsLikeMoved) {
  for (const char* bytes :
       {"+OK\r\n", ":1\r\n", "$-1\r\n", "*-1\r\n", "*0\r\n", "$25\r\nMOVED 3999 127.0.0.1:6381\r\n",
        "+TRYAGAIN\r\n", "*1\r\n-MOVED 3999 127.0.0.1:6381\r\n"}) {
    const auto r = classify(bytes);
    EXPECT_EQ(r.kind, Kind::not_error) << bytes;
    EXPECT_FALSE(r.transient()) << bytes;
    EXPECT_FALSE(r.redirection()) << bytes;
  }
}

TEST(ClusterRetryDelay, StartsAtTenMillisecondsAndDoublesUpTo200) {
  const std::chrono::milliseconds expected[] = {10ms, 20ms, 40ms, 80ms, 160ms, 200ms, 200ms};
  std::chrono::milliseconds waited{0};
  for (unsigned i = 0; i < std::size(expected); ++i) {
    const auto delay = cluster_retry_delay(waited, 1h);
    ASSERT_TRUE(delay.has_value()) << "retry " << i;
    EXPECT_EQ(*delay, expected[i]) << "retry " << i;
    waited += *delay;
  }
  EXPECT_EQ(cluster_retry_delay(24h, 1000h), 200ms) << "no overflow after a long wait";
}

TEST(ClusterRetryDelay, StopsWhenTheNextWaitWouldPassTheCommandTimeout) {
  EXPECT_EQ(cluster_retry_delay(30ms, 70ms), 40ms) << "ends exactly at the limit";
  EXPECT_EQ(cluster_retry_delay(31ms, 70ms), std::nullopt);
  EXPECT_EQ(cluster_retry_delay(0ms, 9ms), std::nullopt) << "a limit below the first wait";
}

}  // namespace
}  // namespace distlock::topology
