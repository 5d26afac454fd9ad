// The commands a new connection sends first, and how their replies are
// judged, on RESP bytes.
#include "net/connection_handshake.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "distlock/error.hpp"
#include "resp/decoder.hpp"
#include "resp/encoder.hpp"

namespace distlock::net {
namespace {

std::string command(std::initializer_list<std::string_view> args) {
  std::string out;
  resp::encode_command(out, args);
  return out;
}

// The handshake's reply as the connection hands it over: the one reply, or
// the array of them.
Value reply(const ConnectionHandshake& h, std::string_view bytes) {
  resp::Decoder decoder;
  decoder.feed(bytes.data(), bytes.size());
  std::vector<Value> replies;
  for (;;) {
    std::error_code ec;
    auto v = decoder.next(ec);
    EXPECT_FALSE(ec);
    if (!v) break;
    replies.push_back(std::move(*v));
  }
  EXPECT_EQ(replies.size(), h.replies());
  if (replies.size() == 1) return std::move(replies[0]);
  return Value::array(std::move(replies));
}

ClientOptions options() {
  ClientOptions o;
  o.client_name.clear();
  return o;
}

TEST(ConnectionHandshake, WithNothingToSetUpItSendsOnePing) {
  const ConnectionHandshake h(options(), {});
  EXPECT_EQ(h.payload(), command({"PING"}));
  std::string message = "stale";
  EXPECT_FALSE(h.check(reply(h, "+PONG\r\n"), message));
  EXPECT_EQ(message, "");
}

TEST(ConnectionHandshake, AuthSelectAndClientNameAreSentInThatOrderBeforeThePreload) {
  auto o = options();
  o.username = "alice";
  o.password = "secret";
  o.db = 2;
  o.client_name = "svc";
  const ConnectionHandshake h(o, {{"SCRIPT", "LOAD", "return 1"}});
  EXPECT_EQ(h.payload(), command({"AUTH", "alice", "secret"}) + command({"SELECT", "2"}) +
                             command({"CLIENT", "SETNAME", "svc"}) +
                             command({"SCRIPT", "LOAD", "return 1"}));
  EXPECT_EQ(h.replies(), 4u);
  std::string message;
  EXPECT_FALSE(
      h.check(reply(h, "+OK\r\n+OK\r\n+OK\r\n$40\r\n" + std::string(40, 'e') + "\r\n"), message));
}

TEST(ConnectionHandshake, APasswordWithoutUserAuthenticatesTheDefaultUser) {
  auto o = options();
  o.password = "secret";
  const ConnectionHandshake h(o, {});
  EXPECT_EQ(h.payload(), command({"AUTH", "secret"}));
}

TEST(ConnectionHandshake, ARefusedAuthFailsWithAuthFailedNamingTheUserButNotThePassword) {
  auto o = options();
  o.username = "alice";
  o.password = "secret";
  o.client_name = "svc";
  const ConnectionHandshake h(o, {});
  std::string message;
  const auto ec =
      h.check(reply(h, "-WRONGPASS invalid username-password pair or user is disabled.\r\n+OK\r\n"),
              message);
  EXPECT_EQ(ec, errc::auth_failed);
  EXPECT_EQ(message,
            "AUTH user 'alice' failed: WRONGPASS invalid username-password pair or user is "
            "disabled.");
  EXPECT_EQ(message.find("secret"), std::string::npos);
}

TEST(ConnectionHandshake, ARefusedSelectFailsWithConnectionFailed) {
  auto o = options();
  o.db = 99;
  const ConnectionHandshake h(o, {});
  std::string message;
  EXPECT_EQ(h.check(reply(h, "-ERR DB index is out of range\r\n"), message),
            errc::connection_failed);
  EXPECT_EQ(message, "SELECT 99 failed: ERR DB index is out of range");
}

TEST(ConnectionHandshake, AnErrorToAPreloadedCommandIsIgnored) {
  auto o = options();
  o.client_name = "svc";
  const ConnectionHandshake h(o, {{"SCRIPT", "LOAD", "return 1"}});
  std::string message;
  EXPECT_FALSE(h.check(reply(h, "+OK\r\n-NOPERM this user has no permissions\r\n"), message));
}

TEST(ConnectionHandshake, WithoutPreloadScriptsNothingIsPreloaded) {
  auto o = options();
  o.client_name = "svc";
  o.preload_scripts = false;
  const ConnectionHandshake h(o, {{"SCRIPT", "LOAD", "return 1"}});
  EXPECT_EQ(h.payload(), command({"CLIENT", "SETNAME", "svc"}));
  std::string message;
  EXPECT_FALSE(h.check(reply(h, "+OK\r\n"), message));
}

}  // namespace
}  // namespace distlock::net
