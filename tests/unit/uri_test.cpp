#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "distlock/client_options.hpp"
#include "distlock/error.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;

struct Good {
  std::string uri;
  std::function<void(ClientOptions&)> expect;  // applied to the defaults
};

std::vector<Good> good_uris() {
  return {
      {"redis://localhost", [](ClientOptions& o) { o.host = "localhost"; }},
      {"redis://127.0.0.1:7000", [](ClientOptions& o) { o.port = 7000; }},
      {"redis://h:6380/3",
       [](ClientOptions& o) {
         o.host = "h";
         o.port = 6380;
         o.db = 3;
       }},
      {"redis://h/", [](ClientOptions& o) { o.host = "h"; }},
      {"redis://:secret@h",
       [](ClientOptions& o) {
         o.host = "h";
         o.password = "secret";
       }},
      {"redis://alice:s3cr%40t%3A%2F%25@h",
       [](ClientOptions& o) {
         o.host = "h";
         o.username = "alice";
         o.password = "s3cr@t:/%";
       }},
      {"redis://user:pa@ss@h",
       [](ClientOptions& o) {
         o.host = "h";
         o.username = "user";
         o.password = "pa@ss";
       }},
      {"redis://:@h", [](ClientOptions& o) { o.host = "h"; }},
      {"redis://[::1]:6390/2",
       [](ClientOptions& o) {
         o.host = "::1";
         o.port = 6390;
         o.db = 2;
       }},
      {"redis://[fe80::1:2]", [](ClientOptions& o) { o.host = "fe80::1:2"; }},
      {"redis://my_service-1.ns.svc:1",
       [](ClientOptions& o) {
         o.host = "my_service-1.ns.svc";
         o.port = 1;
       }},
      {"redis://h:65535",
       [](ClientOptions& o) {
         o.host = "h";
         o.port = 65535;
       }},
      {"REDIS://H", [](ClientOptions& o) { o.host = "H"; }},
      {"redis://h?db=5&connect_timeout_ms=250&command_timeout_ms=1000&client_name=svc-a",
       [](ClientOptions& o) {
         o.host = "h";
         o.db = 5;
         o.connect_timeout = 250ms;
         o.command_timeout = 1000ms;
         o.client_name = "svc-a";
       }},
      {"redis://h?client_name=&&db=1",
       [](ClientOptions& o) {
         o.host = "h";
         o.client_name = "";
         o.db = 1;
       }},
      {"redis://:p%40ss@h?client_name=a@b",
       [](ClientOptions& o) {
         o.host = "h";
         o.password = "p@ss";
         o.client_name = "a@b";
       }},
      {"rediss://h",
       [](ClientOptions& o) {
         o.host = "h";
         o.tls.enabled = true;
       }},
      {"rediss://u:p@h:6390?ca_file=/etc/ca.pem&ca_dir=/etc/certs&cert_file=/c.pem"
       "&key_file=/k.pem&server_name=redis.internal&verify_peer=false",
       [](ClientOptions& o) {
         o.host = "h";
         o.port = 6390;
         o.username = "u";
         o.password = "p";
         o.tls = {.enabled = true,
                  .verify_peer = false,
                  .ca_file = "/etc/ca.pem",
                  .ca_dir = "/etc/certs",
                  .cert_file = "/c.pem",
                  .key_file = "/k.pem",
                  .server_name = "redis.internal"};
       }},
      {"rediss://h?verify_peer=true&cert_file=/both.pem",
       [](ClientOptions& o) {
         o.host = "h";
         o.tls.enabled = true;
         o.tls.cert_file = "/both.pem";
       }},
      {"redis://h?preload_scripts=false",
       [](ClientOptions& o) {
         o.host = "h";
         o.preload_scripts = false;
       }},
      {"redis://h?preload_scripts=true", [](ClientOptions& o) { o.host = "h"; }},
      {"redis-cluster://h?sharded_pubsub=on",
       [](ClientOptions& o) {
         o.host = "h";
         o.sharded_pubsub = ClientOptions::ShardedPubsub::on;
       }},
      {"redis-cluster://h?sharded_pubsub=off",
       [](ClientOptions& o) {
         o.host = "h";
         o.sharded_pubsub = ClientOptions::ShardedPubsub::off;
       }},
      {"redis-cluster://h?sharded_pubsub=auto", [](ClientOptions& o) { o.host = "h"; }},
      {"redis://h?sharded_pubsub=off",
       [](ClientOptions& o) {
         o.host = "h";
         o.sharded_pubsub = ClientOptions::ShardedPubsub::off;
       }},
      {"unix:///var/run/redis.sock", [](ClientOptions& o) { o.unix_path = "/var/run/redis.sock"; }},
      {"unix:///tmp/redis%20test.sock?db=2&client_name=x",
       [](ClientOptions& o) {
         o.unix_path = "/tmp/redis test.sock";
         o.db = 2;
         o.client_name = "x";
       }},
      {"unix://:pw@/run/redis@6379.sock",
       [](ClientOptions& o) {
         o.unix_path = "/run/redis@6379.sock";
         o.password = "pw";
       }},
  };
}

void expect_same(const ClientOptions& got, const ClientOptions& want, const std::string& uri) {
  SCOPED_TRACE(uri);
  EXPECT_EQ(got.host, want.host);
  EXPECT_EQ(got.port, want.port);
  EXPECT_EQ(got.unix_path, want.unix_path);
  EXPECT_EQ(got.username, want.username);
  EXPECT_EQ(got.password, want.password);
  EXPECT_EQ(got.db, want.db);
  EXPECT_EQ(got.client_name, want.client_name);
  EXPECT_EQ(got.tls.enabled, want.tls.enabled);
  EXPECT_EQ(got.tls.verify_peer, want.tls.verify_peer);
  EXPECT_EQ(got.tls.ca_file, want.tls.ca_file);
  EXPECT_EQ(got.tls.ca_dir, want.tls.ca_dir);
  EXPECT_EQ(got.tls.cert_file, want.tls.cert_file);
  EXPECT_EQ(got.tls.key_file, want.tls.key_file);
  EXPECT_EQ(got.tls.server_name, want.tls.server_name);
  EXPECT_EQ(got.connect_timeout, want.connect_timeout);
  EXPECT_EQ(got.command_timeout, want.command_timeout);
  EXPECT_EQ(got.preload_scripts, want.preload_scripts);
  EXPECT_EQ(got.sharded_pubsub, want.sharded_pubsub);
}

TEST(ClientOptionsFromUri, ParsesEveryWellFormedUriIntoTheExpectedFields) {
  for (const Good& good : good_uris()) {
    ClientOptions want;
    good.expect(want);
    ClientOptions got;
    ASSERT_NO_THROW(got = ClientOptions::from_uri(good.uri)) << good.uri;
    expect_same(got, want, good.uri);
  }
}

TEST(ClientOptionsFromUri, LeavesEverythingNotInTheUriAtItsDefault) {
  const ClientOptions got = ClientOptions::from_uri("redis://h");
  const ClientOptions defaults;
  EXPECT_EQ(got.port, 6379);
  EXPECT_EQ(got.db, 0);
  EXPECT_EQ(got.client_name, "distlock");
  EXPECT_EQ(got.max_queued, defaults.max_queued);
  EXPECT_EQ(got.watchdog_timeout, defaults.watchdog_timeout);
  EXPECT_EQ(got.reconnect_min_delay, defaults.reconnect_min_delay);
  EXPECT_TRUE(got.tls.server_name.empty()) << "empty means: the host";
  EXPECT_TRUE(got.preload_scripts);
  EXPECT_EQ(got.sharded_pubsub, ClientOptions::ShardedPubsub::automatic);
}

struct Bad {
  std::string uri;
  std::string problem;                    // the message must contain this
  std::vector<std::string> secrets = {};  // ... and none of these
};

std::vector<Bad> bad_uris() {
  return {
      {"", "empty string"},
      {"http://h", "unknown scheme 'http'"},
      {"localhost:6379", "unknown scheme 'localhost'"},
      {"secret@h:6379", "missing scheme", {"secret"}},
      {"redis:h", "missing '//' after 'redis:'"},
      {"redis://", "missing host"},
      {"redis://:secret@", "missing host", {"secret"}},
      {"redis://:secret@h:0", "port 0 out of range 1..65535", {"secret"}},
      {"redis://u:secret@h:70000", "port 70000 out of range 1..65535", {"secret"}},
      {"redis://h:99999999999999999999", "out of range 1..65535"},
      {"redis://:secret@h:abc", "port 'abc' is not a number", {"secret"}},
      {"redis://h:-1", "port '-1' is not a number"},
      {"redis://h:", "missing port number"},
      {"redis://h/-1", "database number '-1' is not a non-negative integer"},
      {"redis://h/abc", "database number 'abc' is not a non-negative integer"},
      {"redis://h/1x", "database number '1x' is not a non-negative integer"},
      {"redis://h/99999999999", "database number '99999999999' out of range"},
      {"redis://h?db=-1", "database number '-1'"},
      {"redis://h/1/2", "unexpected path '/1/2'"},
      {"redis://h/1?db=2", "database number given twice"},
      {"redis://h?db=1&db=2", "option 'db' given twice"},
      {"redis://h?session_timeout_ms=5000",
       "option 'session_timeout_ms' requires a zookeeper:// URI"},
      {"redis-cluster://:secret@h?session_timeout_ms=5000",
       "option 'session_timeout_ms' requires a zookeeper:// URI",
       {"secret"}},
      {"zookeeper-cluster://h", "unknown scheme 'zookeeper-cluster'"},
      {"zookeepers://h", "unknown scheme 'zookeepers'"},
      {"unix://", "empty unix socket path"},
      {"unix:///?db=1", "empty unix socket path"},
      {"unix://redis.sock", "unix socket path must be absolute"},
      {"unix:///" + std::string(200, 'p') + ".sock", "bytes long (at most 107)"},
      {"redis://:secret@h?foo=bar", "unknown option 'foo'", {"secret"}},
      {"redis://h?password=secret", "unknown option 'password'", {"secret"}},
      {"redis://h?db", "option 'db' has no value"},
      {"redis://h?db=", "option 'db' has no value"},
      {"redis://:bad%zzsecret@h", "invalid percent-encoding in the password", {"bad", "secret"}},
      {"redis://:secret%4@h", "invalid percent-encoding in the password", {"secret"}},
      {"redis://us%g0:secret@h", "invalid percent-encoding in the user name", {"secret"}},
      {"redis://h?client_name=a%ZZ", "invalid percent-encoding in the value of option"},
      {"redis://user@h", "user name without a password"},
      {"rediss://:secret@h?verify_peer=maybe",
       "verify_peer 'maybe' must be true or false",
       {"secret"}},
      {"redis://:secret@h?coalesce=yes", "coalesce 'yes' must be true or false", {"secret"}},
      {"redis://h?coalesce=", "option 'coalesce' has no value"},
      {"redis://:secret@h?preload_scripts=no",
       "preload_scripts 'no' must be true or false",
       {"secret"}},
      {"redis://h?preload_scripts=", "option 'preload_scripts' has no value"},
      {"redis-cluster://:secret@h?sharded_pubsub=yes",
       "sharded_pubsub 'yes' must be auto, on or off",
       {"secret"}},
      {"redis-cluster://h?sharded_pubsub=", "option 'sharded_pubsub' has no value"},
      {"redis-cluster://h?sharded_pubsub=ON", "sharded_pubsub 'ON' must be auto, on or off"},
      {"redis://h?connect_timeout_ms=0", "connect_timeout_ms '0' is not a positive number"},
      {"redis://h?command_timeout_ms=-5", "command_timeout_ms '-5' is not a positive number"},
      {"redis://h?connect_timeout_ms=abc", "connect_timeout_ms 'abc' is not a positive number"},
      {"redis://h?command_timeout_ms=99999999999", "out of range 1..2147483647"},
      {"redis://[::1:6379", "unterminated IPv6 address"},
      {"redis://[]:6379", "empty IPv6 address"},
      {"redis://[nothex]:6379", "invalid IPv6 address 'nothex'"},
      {"redis://[::1]x", "unexpected 'x' after ']'"},
      {"redis://::1:6379", "must be enclosed in brackets"},
      {"redis://ho st", "invalid character ' ' in host"},
      {"redis://h\x01", "invalid character '\\x01' in host"},
      {"redis://h#frag", "invalid character '#' in host"},
      {"redis://h?client_name=a b", "client_name 'a b' contains a space"},
      {"redis://h?server_name=a%0Ab", "contains a control character"},
      {"redis://:secret@h?ca_file=/ca.pem",
       "option 'ca_file' requires the rediss:// scheme",
       {"secret"}},
      {"redis://h?verify_peer=true", "option 'verify_peer' requires the rediss:// scheme"},
      {"unix:///tmp/r.sock?server_name=x", "option 'server_name' requires the rediss:// scheme"},
      {"rediss://h?key_file=/k.pem", "key_file requires cert_file"},
      // A raw '/' in a password splits the URI in the wrong place; no piece of
      // it may show up in the message.
      {"redis://u:Xy7/Qz@h", "is not a number", {"Xy7", "Qz"}},
      // A password that equals another part of the URI is still redacted.
      {"redis://:70000@h:70000", "out of range 1..65535", {"70000"}},
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

TEST(ClientOptionsFromUri, RejectsEveryMalformedUriWithAMessageNamingTheProblem) {
  for (const Bad& bad : bad_uris()) {
    const std::string message = rejection_of(bad.uri);
    EXPECT_EQ(message.rfind("invalid Redis URI: ", 0), 0u) << message;
    EXPECT_NE(message.find(bad.problem), std::string::npos)
        << "uri: " << bad.uri << "\nmessage: " << message;
  }
}

TEST(ClientOptionsFromUri, NeverPutsThePasswordIntoAnErrorMessage) {
  for (const Bad& bad : bad_uris()) {
    const std::string message = rejection_of(bad.uri);
    for (const std::string& secret : bad.secrets) {
      EXPECT_EQ(message.find(secret), std::string::npos)
          << "uri: " << bad.uri << "\nmessage: " << message;
    }
  }
}

}  // namespace
}  // namespace distlock
