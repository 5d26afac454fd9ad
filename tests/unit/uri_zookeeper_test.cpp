// The ZooKeeper backend's options: net::zk_path_problem (the chroot check),
// ClientOptions::from_uri for zookeeper:// URIs (the servers, digest
// credentials, chroot and options, and the malformed ones), and validate() of
// ZooKeeper options built directly.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "client_options.hpp"
#include "distlock/client_options.hpp"
#include "distlock/error.hpp"
#include "net/zk_path.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using Backend = ClientOptions::Backend;

TEST(ZooKeeperPath, AcceptsAbsolutePathsOfNodesBelowTheRoot) {
  for (const char* path : {"/a", "/a/b/c", "/zookeeperx", "/zoo/zookeeper", "/.a/..b/a./...",
                           "/a b/\xc3\xb6l", "/Zookeeper"}) {
    EXPECT_EQ(net::zk_path_problem(path), std::nullopt) << path;
  }
}

TEST(ZooKeeperPath, NamesWhatIsWrongWithEveryOtherPath) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "is empty"},
      {"a/b", "does not start with '/'"},
      {"/", "is the root '/', not a node below it"},
      {"/a/", "ends with '/'"},
      {"//", "ends with '/'"},
      {"//a", "has an empty segment ('//')"},
      {"/a//b", "has an empty segment ('//')"},
      {"/.", "has a '.' or '..' segment"},
      {"/..", "has a '.' or '..' segment"},
      {"/a/./b", "has a '.' or '..' segment"},
      {"/a/..", "has a '.' or '..' segment"},
      {std::string("/a\0b", 4), "contains a NUL or control character"},
      {"/a\x01", "contains a NUL or control character"},
      {"/a\x1f/b", "contains a NUL or control character"},
      {"/a\x7f", "contains a NUL or control character"},
      {"/zookeeper", "is /zookeeper or under it, which ZooKeeper reserves for itself"},
      {"/zookeeper/config", "is /zookeeper or under it, which ZooKeeper reserves for itself"},
  };
  for (const auto& [path, problem] : bad) {
    EXPECT_EQ(net::zk_path_problem(path), problem) << "path of " << path.size() << " bytes";
  }
}

std::vector<std::string> seeds_of(const ClientOptions& o) {
  std::vector<std::string> out;
  for (const auto& s : o.seeds) out.push_back(s.host + ":" + std::to_string(s.port));
  return out;
}

struct Good {
  std::string uri;
  std::vector<std::string> seeds;                // host:port, in order
  std::function<void(ClientOptions&)> expect{};  // applied to the defaults
};

std::vector<Good> good_uris() {
  return {
      {"zookeeper://zk1", {"zk1:2181"}},
      {"zookeeper://zk1,zk2,zk3", {"zk1:2181", "zk2:2181", "zk3:2181"}},
      {"zookeeper://zk1:2182,zk2,10.0.0.3:2183", {"zk1:2182", "zk2:2181", "10.0.0.3:2183"}},
      {"zookeeper://[::1],[fe80::1:2]:2182,zk", {"::1:2181", "fe80::1:2:2182", "zk:2181"}},
      {"zookeeper://zk:2181,zk:2182", {"zk:2181", "zk:2182"}},
      {"ZooKeeper://ZK", {"ZK:2181"}},
      {"zookeeper://zk/", {"zk:2181"}},
      {"zookeeper://zk/app", {"zk:2181"}, [](ClientOptions& o) { o.chroot = "/app"; }},
      {"zookeeper://zk1,zk2/app/locks?session_timeout_ms=5000",
       {"zk1:2181", "zk2:2181"},
       [](ClientOptions& o) {
         o.chroot = "/app/locks";
         o.session_timeout = 5000ms;
       }},
      {"zookeeper://zk/my%20app/%C3%B6l",
       {"zk:2181"},
       [](ClientOptions& o) { o.chroot = "/my app/\xc3\xb6l"; }},
      {"zookeeper://zk/a%2Fb", {"zk:2181"}, [](ClientOptions& o) { o.chroot = "/a/b"; }},
      {"zookeeper://zk/zookeeperx/.a/..b/a.",
       {"zk:2181"},
       [](ClientOptions& o) { o.chroot = "/zookeeperx/.a/..b/a."; }},
      {"zookeeper://zk/app@2", {"zk:2181"}, [](ClientOptions& o) { o.chroot = "/app@2"; }},
      {"zookeeper://zk?session_timeout_ms=30000&connect_timeout_ms=250&command_timeout_ms=1000",
       {"zk:2181"},
       [](ClientOptions& o) {
         o.session_timeout = 30000ms;
         o.connect_timeout = 250ms;
         o.command_timeout = 1000ms;
       }},
      {"zookeeper://zk?session_timeout_ms=1",
       {"zk:2181"},
       [](ClientOptions& o) { o.session_timeout = 1ms; }},
      {"zookeeper://zk/?&session_timeout_ms=3600000&",
       {"zk:2181"},
       [](ClientOptions& o) { o.session_timeout = 3600000ms; }},
      {"zookeeper://alice:s3cr%40t%3A%2F@zk1,zk2/c",
       {"zk1:2181", "zk2:2181"},
       [](ClientOptions& o) {
         o.username = "alice";
         o.password = "s3cr@t:/";
         o.chroot = "/c";
       }},
      {"zookeeper://bob:pa@ss@zk",
       {"zk:2181"},
       [](ClientOptions& o) {
         o.username = "bob";
         o.password = "pa@ss";
       }},
  };
}

TEST(ZooKeeperUri, ParsesEveryWellFormedUriIntoTheExpectedFields) {
  for (const Good& good : good_uris()) {
    SCOPED_TRACE(good.uri);
    ClientOptions want;
    want.backend = Backend::zookeeper;
    if (good.expect) good.expect(want);
    ClientOptions got;
    ASSERT_NO_THROW(got = ClientOptions::from_uri(good.uri));
    EXPECT_EQ(got.backend, Backend::zookeeper);
    EXPECT_EQ(got.deployment, ClientOptions::Deployment::standalone);
    EXPECT_EQ(seeds_of(got), good.seeds);
    ASSERT_FALSE(got.seeds.empty());
    EXPECT_EQ(got.host, got.seeds.front().host) << "host and port are the first server's";
    EXPECT_EQ(got.port, got.seeds.front().port);
    EXPECT_EQ(got.chroot, want.chroot);
    EXPECT_EQ(got.session_timeout, want.session_timeout);
    EXPECT_EQ(got.connect_timeout, want.connect_timeout);
    EXPECT_EQ(got.command_timeout, want.command_timeout);
    EXPECT_EQ(got.username, want.username);
    EXPECT_EQ(got.password, want.password);
    EXPECT_FALSE(got.tls.enabled);
    EXPECT_TRUE(got.unix_path.empty());
    EXPECT_EQ(got.db, 0);
    EXPECT_EQ(got.client_name, want.client_name);
    EXPECT_NO_THROW(validate(got)) << "from_uri returned options validate() refuses";
  }
}

TEST(ZooKeeperUri, LeavesTheSessionTimeoutAtTenSecondsAndRedisUrisOnTheRedisBackend) {
  EXPECT_EQ(ClientOptions::from_uri("zookeeper://zk").session_timeout, 10000ms);
  for (const char* uri : {"redis://h", "rediss://h", "unix:///r.sock", "redis-cluster://a,b",
                          "redis-sentinel://s/m"}) {
    const ClientOptions o = ClientOptions::from_uri(uri);
    EXPECT_EQ(o.backend, Backend::redis) << uri;
    EXPECT_TRUE(o.chroot.empty()) << uri;
  }
}

struct Bad {
  std::string uri;
  std::string problem;                    // the message must contain this
  std::vector<std::string> secrets = {};  // ... and none of these
};

std::vector<Bad> bad_uris() {
  const std::string reserved = "is /zookeeper or under it, which ZooKeeper reserves for itself";
  const std::string not_zk = "is not a ZooKeeper option (expected session_timeout_ms, ";
  return {
      {"zookeeper:zk", "missing '//' after 'zookeeper:'"},
      {"zookeeper://", "empty host list"},
      {"zookeeper:///app", "empty host list"},
      {"zookeeper://u:secret@", "empty host list", {"secret"}},
      {"zookeeper://zk1,,zk2", "empty entry in the host list ',zk2'"},
      {"zookeeper://zk1,", "empty entry"},
      {"zookeeper://zk1:2181,zk1", "host 'zk1:2181' given twice"},
      {"zookeeper://[::1]:2181,[::1]", "host '::1:2181' given twice"},
      {"zookeeper://zk:0", "port 0 out of range 1..65535"},
      {"zookeeper://zk:x", "port 'x' is not a number"},
      {"zookeeper://::1", "an IPv6 address must be enclosed in brackets, as in zookeeper://"},
      {"zookeeper://[::1", "unterminated IPv6 address"},
      {"zookeeper://z k", "invalid character ' ' in host"},
      // Digest authentication.
      {"zookeeper://alice@zk", "digest authentication needs user:password (the password is"},
      {"zookeeper://:secret@zk",
       "digest authentication needs user:password (the user name is empty)",
       {"secret"}},
      {"zookeeper://alice:@zk",
       "digest authentication needs user:password (the password is empty)"},
      {"zookeeper://:@zk", "digest authentication needs user:password (both are empty)"},
      {"zookeeper://al%3Ace:secret@zk", "the digest user name contains ':'", {"secret"}},
      {"zookeeper://u:bad%zzsecret@zk",
       "invalid percent-encoding in the password",
       {"bad", "secret"}},
      {"zookeeper://u%g0:secret@zk", "invalid percent-encoding in the user name", {"secret"}},
      // The chroot.
      {"zookeeper://zk/app/", "chroot '/app/' ends with '/'"},
      {"zookeeper://zk/app%2F", "chroot '/app/' ends with '/'"},
      {"zookeeper://zk//", "chroot '//' ends with '/'"},
      {"zookeeper://zk//app", "chroot '//app' has an empty segment ('//')"},
      {"zookeeper://zk/a//b", "chroot '/a//b' has an empty segment ('//')"},
      {"zookeeper://zk/.", "chroot '/.' has a '.' or '..' segment"},
      {"zookeeper://zk/a/../b", "chroot '/a/../b' has a '.' or '..' segment"},
      {"zookeeper://zk/a/%2E%2E", "chroot '/a/..' has a '.' or '..' segment"},
      {"zookeeper://zk/a/./b", "has a '.' or '..' segment"},
      {"zookeeper://zk/a%00b", "chroot '/a\\x00b' contains a NUL or control character"},
      {"zookeeper://zk/a%1Fb", "chroot '/a\\x1fb' contains a NUL or control character"},
      {"zookeeper://zk/a%7F", "contains a NUL or control character"},
      {"zookeeper://zk/a%0A/b", "contains a NUL or control character"},
      {"zookeeper://zk/zookeeper", "chroot '/zookeeper' " + reserved},
      {"zookeeper://zk/zookeeper/quota", "chroot '/zookeeper/quota' " + reserved},
      {"zookeeper://zk/a%zz", "invalid percent-encoding in the chroot"},
      // Options: the three ZooKeeper ones, and every Redis one refused by name.
      {"zookeeper://zk?session_timeout_ms=0",
       "session_timeout_ms '0' is not a positive number of milliseconds"},
      {"zookeeper://zk?session_timeout_ms=-1", "session_timeout_ms '-1' is not a positive number"},
      {"zookeeper://zk?session_timeout_ms=1s", "session_timeout_ms '1s' is not a positive number"},
      {"zookeeper://zk?session_timeout_ms=3600001",
       "session_timeout_ms '3600001' out of range 1..3600000"},
      {"zookeeper://zk?session_timeout_ms=99999999999999999999",
       "session_timeout_ms '99999999999999999999' out of range 1..3600000"},
      {"zookeeper://zk?session_timeout_ms=", "option 'session_timeout_ms' has no value"},
      {"zookeeper://zk?session_timeout_ms", "option 'session_timeout_ms' has no value"},
      {"zookeeper://zk?session_timeout_ms=1&session_timeout_ms=2",
       "option 'session_timeout_ms' given twice"},
      {"zookeeper://zk?connect_timeout_ms=0", "connect_timeout_ms '0' is not a positive number"},
      {"zookeeper://zk?command_timeout_ms=99999999999", "out of range 1..2147483647"},
      {"zookeeper://zk?connect_timeout_ms=1&connect_timeout_ms=1", "given twice"},
      {"zookeeper://zk?db=1", "option 'db' " + not_zk},
      {"zookeeper://zk/?db=", "option 'db' " + not_zk},
      {"zookeeper://zk?coalesce=true", "option 'coalesce' " + not_zk},
      {"zookeeper://zk?preload_scripts=false", "option 'preload_scripts' " + not_zk},
      {"zookeeper://zk?sharded_pubsub=on", "option 'sharded_pubsub' " + not_zk},
      {"zookeeper://zk?client_name=x", "option 'client_name' " + not_zk},
      {"zookeeper://zk?ca_file=/ca.pem", "option 'ca_file' " + not_zk},
      {"zookeeper://zk?verify_peer=false", "option 'verify_peer' " + not_zk},
      {"zookeeper://zk?server_name=zk", "option 'server_name' " + not_zk},
      {"zookeeper://zk?min_replicas_acked=1", "option 'min_replicas_acked' " + not_zk},
      {"zookeeper://zk?replica_ack_timeout_ms=5", "option 'replica_ack_timeout_ms' " + not_zk},
      {"zookeeper://zk?sentinel_password=secret",
       "option 'sentinel_password' " + not_zk,
       {"secret"}},
      {"zookeeper://u:secret@zk?password=secret", "option 'password' " + not_zk, {"secret"}},
      {"zookeeper://zk?colour=red", "option 'colour' " + not_zk},
      // The password never shows, even where it equals another part of the URI
      // or a raw '/' in it splits the URI in the wrong place.
      {"zookeeper://u:secret@zk?db=1", "option 'db' " + not_zk, {"secret"}},
      {"zookeeper://u:app@zk/app/", "ends with '/'", {"app"}},
      {"zookeeper://u:70000@zk:70000", "out of range 1..65535", {"70000"}},
      {"zookeeper://u:Xy7/Qz@zk", "is not a number", {"Xy7", "Qz"}},
      {"zookeeper://u:pw@zk/se@cret/", "chroot '***' ends with '/'", {"se@cret", "cret"}},
  };
}

std::string rejection_of(const std::string& uri) {
  try {
    (void)ClientOptions::from_uri(uri);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::invalid_argument) << uri;
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << uri;
  return {};
}

TEST(ZooKeeperUri, RejectsEveryMalformedUriWithAMessageNamingTheProblem) {
  for (const Bad& bad : bad_uris()) {
    const std::string message = rejection_of(bad.uri);
    EXPECT_EQ(message.rfind("invalid ZooKeeper URI: ", 0), 0u) << message;
    EXPECT_NE(message.find(bad.problem), std::string::npos)
        << "uri: " << bad.uri << "\nmessage: " << message;
  }
}

TEST(ZooKeeperUri, NeverPutsThePasswordIntoAnErrorMessage) {
  for (const Bad& bad : bad_uris()) {
    const std::string message = rejection_of(bad.uri);
    for (const std::string& secret : bad.secrets) {
      EXPECT_EQ(message.find(secret), std::string::npos)
          << "uri: " << bad.uri << "\nmessage: " << message;
    }
  }
}

ClientOptions zookeeper_options() {
  ClientOptions o;
  o.backend = Backend::zookeeper;
  o.seeds = {{"zk1", 2181}, {"zk2", 2182}};
  return o;
}

// What validate() throws for `o` (code and message), or nullopt.
std::optional<std::pair<std::error_code, std::string>> refusal_of(const ClientOptions& o) {
  try {
    validate(o);
  } catch (const Error& e) {
    return std::pair{e.code(), std::string(e.what())};
  }
  return std::nullopt;
}

TEST(ZooKeeperOptions, ValidateAcceptsAnEnsembleAndIgnoresTheRedisOnlyFields) {
  ClientOptions o = zookeeper_options();
  EXPECT_EQ(refusal_of(o), std::nullopt);
  o.chroot = "/app/locks";
  o.session_timeout = 1ms;
  o.username = "alice";
  o.password = "secret";
  EXPECT_EQ(refusal_of(o), std::nullopt);
  o.session_timeout = 1h;
  o.deployment = ClientOptions::Deployment::cluster;
  o.db = 3;
  o.coalesce = true;
  o.min_replicas_acked = 2;
  o.sharded_pubsub = ClientOptions::ShardedPubsub::on;
  o.client_name = "";
  o.sentinel_master = "m";
  EXPECT_EQ(refusal_of(o), std::nullopt);
}

TEST(ZooKeeperOptions, ValidateRefusesEachBadFieldNamingIt) {
  struct Case {
    std::string what;
    std::function<void(ClientOptions&)> change;
    errc code;
    std::string problem;
  };
  const std::string digest = "digest authentication needs user:password";
  const std::vector<Case> cases = {
      {"no seeds", [](ClientOptions& o) { o.seeds.clear(); }, errc::invalid_argument,
       "a ZooKeeper backend needs seeds"},
      {"seed port 0", [](ClientOptions& o) { o.seeds[1].port = 0; }, errc::invalid_argument,
       "ZooKeeper seed 'zk2' has port 0"},
      {"seed host empty", [](ClientOptions& o) { o.seeds[0].host.clear(); }, errc::invalid_argument,
       "a ZooKeeper seed has an empty host"},
      {"session 0", [](ClientOptions& o) { o.session_timeout = 0ms; }, errc::invalid_argument,
       "session_timeout must be in [1 ms, 1 h], got 0 ms"},
      {"session negative", [](ClientOptions& o) { o.session_timeout = -5ms; },
       errc::invalid_argument, "session_timeout must be in [1 ms, 1 h], got -5 ms"},
      {"session over 1 h", [](ClientOptions& o) { o.session_timeout = 1h + 1ms; },
       errc::invalid_argument, "session_timeout must be in [1 ms, 1 h], got 3600001 ms"},
      {"chroot relative", [](ClientOptions& o) { o.chroot = "app"; }, errc::invalid_argument,
       "chroot 'app' does not start with '/'"},
      {"chroot root", [](ClientOptions& o) { o.chroot = "/"; }, errc::invalid_argument,
       "chroot '/' is the root '/', not a node below it (an empty chroot is the root)"},
      {"chroot trailing /", [](ClientOptions& o) { o.chroot = "/app/"; }, errc::invalid_argument,
       "chroot '/app/' ends with '/'"},
      {"chroot //", [](ClientOptions& o) { o.chroot = "/a//b"; }, errc::invalid_argument,
       "chroot '/a//b' has an empty segment"},
      {"chroot ..", [](ClientOptions& o) { o.chroot = "/a/../b"; }, errc::invalid_argument,
       "chroot '/a/../b' has a '.' or '..' segment"},
      {"chroot NUL", [](ClientOptions& o) { o.chroot = std::string("/a\0b", 4); },
       errc::invalid_argument, "chroot '/a\\x00b' contains a NUL or control character"},
      {"chroot reserved", [](ClientOptions& o) { o.chroot = "/zookeeper/quota"; },
       errc::invalid_argument, "chroot '/zookeeper/quota' is /zookeeper or under it"},
      {"user without password", [](ClientOptions& o) { o.username = "alice"; },
       errc::invalid_argument, digest + " (username without a password)"},
      {"password without user", [](ClientOptions& o) { o.password = "secret"; },
       errc::invalid_argument, digest + " (password without a username)"},
      {"user with ':'",
       [](ClientOptions& o) {
         o.username = "al:ice";
         o.password = "secret";
       },
       errc::invalid_argument, "the digest username contains ':'"},
      {"unix_path", [](ClientOptions& o) { o.unix_path = "/run/zk.sock"; }, errc::invalid_argument,
       "unix_path is a Redis option"},
      {"tls", [](ClientOptions& o) { o.tls.enabled = true; }, errc::not_supported,
       "TLS to ZooKeeper is not supported yet"},
      {"connect timeout 0", [](ClientOptions& o) { o.connect_timeout = 0ms; },
       errc::invalid_argument, "connect_timeout must be positive"},
      {"backend out of range", [](ClientOptions& o) { o.backend = static_cast<Backend>(7); },
       errc::invalid_argument, "backend must be redis, zookeeper, mysql or postgresql, got 7"},
  };
  for (const Case& c : cases) {
    ClientOptions o = zookeeper_options();
    c.change(o);
    const auto refusal = refusal_of(o);
    ASSERT_TRUE(refusal.has_value()) << c.what << ": accepted";
    EXPECT_EQ(refusal->first, make_error_code(c.code)) << c.what << ": " << refusal->second;
    EXPECT_EQ(refusal->second.rfind("ClientOptions: ", 0), 0u) << refusal->second;
    EXPECT_NE(refusal->second.find(c.problem), std::string::npos)
        << c.what << ": " << refusal->second;
    EXPECT_EQ(refusal->second.find("secret"), std::string::npos) << refusal->second;
  }
}

TEST(ZooKeeperOptions, ValidateRefusesAChrootOnTheRedisBackendAndIgnoresTheSessionTimeout) {
  ClientOptions o;
  o.session_timeout = 0ms;
  EXPECT_EQ(refusal_of(o), std::nullopt) << "session_timeout is not a Redis field";
  o.chroot = "/app";
  const auto refusal = refusal_of(o);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->first, make_error_code(errc::invalid_argument));
  EXPECT_NE(refusal->second.find("chroot is a ZooKeeper option"), std::string::npos)
      << refusal->second;
}

}  // namespace
}  // namespace distlock
