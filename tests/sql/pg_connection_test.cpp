// The PostgreSQL driver (backend/sql_connection.hpp) against a real server
// (support/postgres_server.hpp). The driver runs on an io_context thread;
// every call is posted to it, and every wait is bounded.
#include <gtest/gtest.h>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/sql_connection.hpp"
#include "distlock/error.hpp"
#include "support/free_ports.hpp"
#include "support/poll_until.hpp"
#include "support/postgres_server.hpp"

namespace distlock::backend::sql {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test::PostgresServer;

constexpr seconds kBound{15};

// An io_context running on a thread of its own.
class IoThread {
 public:
  IoThread() : guard_(io_.get_executor()), thread_([this] { io_.run(); }) {}
  ~IoThread() {
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  asio::io_context& io() { return io_; }

  // Runs f on the I/O thread and waits (bounded) for it.
  template <class F>
  void run(F f) {
    std::promise<void> ran;
    asio::post(io_, [&] {
      f();
      ran.set_value();
    });
    ASSERT_EQ(ran.get_future().wait_for(kBound), std::future_status::ready);
  }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

struct Opened {
  std::error_code ec;
  std::string message;
};

class PgConnectionTest : public ::testing::Test {
 protected:
  void TearDown() override {
    io_.run([this] { connections_.clear(); });
  }

  // A new connection with `o`, on the I/O thread.
  Connection& make(const ClientOptions& o) {
    options_.push_back(std::make_unique<ClientOptions>(o));
    io_.run(
        [&] { connections_.push_back(make_postgresql_connection(*options_.back(), io_.io())); });
    return *connections_.back();
  }

  Opened open(Connection& c) {
    auto done = std::make_shared<std::promise<Opened>>();
    io_.run([&] {
      c.open([done](std::error_code ec, std::string m) { done->set_value({ec, m}); });
    });
    auto f = done->get_future();
    if (f.wait_for(kBound) != std::future_status::ready) return {errc::cancelled, "open hung"};
    return f.get();
  }

  // A connection of the test server's role, opened.
  Connection& connected(ClientOptions o) {
    Connection& c = make(o);
    const Opened opened = open(c);
    EXPECT_FALSE(opened.ec) << opened.message;
    return c;
  }
  Connection& connected() { return connected(server_.options()); }

  std::future<Result> query(Connection& c,
                            std::string sql,
                            Params params = {},
                            bool no_timeout = false) {
    auto done = std::make_shared<std::promise<Result>>();
    io_.run([&] {
      c.query(
          std::move(sql), std::move(params), [done](Result r) { done->set_value(r); }, no_timeout);
    });
    return done->get_future();
  }

  static Result get(std::future<Result> f) {
    if (f.wait_for(kBound) != std::future_status::ready) {
      // Not errc::timeout: a hang must never pass for the driver's timeout.
      return Result{errc::cancelled, "no result within the test's bound", "", {}};
    }
    return f.get();
  }

  // Waits until `sql` (run as the superuser) returns `expected`.
  bool server_says(const std::string& sql, const std::string& expected) {
    return test::poll_until([&] { return server_.sql(sql) == expected; },
                            std::chrono::steady_clock::now() + kBound);
  }

  PostgresServer server_;
  IoThread io_;
  std::vector<std::unique_ptr<ClientOptions>> options_;
  std::vector<std::unique_ptr<Connection>> connections_;
};

TEST_F(PgConnectionTest, OpenThenSelectReturnsValuesAndBindsTextParametersVerbatim) {
  Connection& c = connected();
  EXPECT_EQ(get(query(c, "SELECT 1")).integer(), 1);
  const std::string tricky = "it's a \\\"quoted\\\" value; DROP TABLE x; --";
  const Result r = get(query(c, "SELECT $1::text || $2::text", {tricky, "!"}));
  ASSERT_FALSE(r.ec) << r.message;
  EXPECT_EQ(r.value, tricky + "!");
  EXPECT_EQ(get(query(c, "SELECT NULL")).value, std::nullopt);
  EXPECT_EQ(get(query(c, "SELECT pg_backend_pid()")).integer(), c.session_id());
  EXPECT_EQ(get(query(c,
                      "SELECT application_name FROM pg_stat_activity WHERE pid = "
                      "pg_backend_pid()"))
                .value,
            "distlock");
  EXPECT_TRUE(c.alive());
}

TEST_F(PgConnectionTest, AServerErrorCarriesItsSqlstateAndLeavesTheConnectionUsable) {
  Connection& c = connected();
  const Result r = get(query(c, "SELECT * FROM no_such_table"));
  EXPECT_EQ(r.ec, errc::server_error);
  EXPECT_EQ(r.code, "42P01") << r.message;
  EXPECT_EQ(get(query(c, "SELECT 2")).integer(), 2);
}

TEST_F(PgConnectionTest, AWrongPasswordFailsWithAuthFailedAndTheMessageNeverHoldsThePassword) {
  ClientOptions o = server_.options();
  o.password = "wrong-pw-Zq9";
  const Opened opened = open(make(o));
  EXPECT_EQ(opened.ec, errc::auth_failed) << opened.message;
  EXPECT_EQ(opened.message.find(o.password), std::string::npos) << opened.message;
  EXPECT_NE(opened.message.find("PostgreSQL 127.0.0.1:" + std::to_string(o.port)),
            std::string::npos)
      << opened.message;
}

TEST_F(PgConnectionTest, APortNobodyListensOnFailsWithConnectionFailed) {
  ClientOptions o = server_.options();
  o.port = test::pick_free_ports(1)[0];
  Connection& c = make(o);
  const Opened opened = open(c);
  EXPECT_EQ(opened.ec, errc::connection_failed) << opened.message;
  EXPECT_FALSE(c.alive());
}

TEST_F(PgConnectionTest, QueriesQueueAndRunOneAtATimeInOrder) {
  Connection& c = connected();
  std::mutex m;
  std::vector<std::string> order;
  std::promise<void> all;
  io_.run([&] {
    for (int i = 0; i < 5; ++i) {
      // The first sleeps, so the others wait in the queue behind it.
      const std::string sql = i == 0 ? "SELECT $1::text FROM pg_sleep(0.2)" : "SELECT $1::text";
      c.query(sql, {std::to_string(i)}, [&, i](Result r) {
        std::lock_guard lock(m);
        order.push_back(r.value.value_or(r.message));
        if (i == 4) all.set_value();
      });
    }
  });
  ASSERT_EQ(all.get_future().wait_for(kBound), std::future_status::ready);
  EXPECT_EQ(order, (std::vector<std::string>{"0", "1", "2", "3", "4"}));
}

TEST_F(PgConnectionTest, AStatementPastCommandTimeoutFailsWithTimeoutAndEndsTheConnection) {
  ClientOptions o = server_.options();
  o.command_timeout = milliseconds(200);
  Connection& c = connected(o);
  const Result r = get(query(c, "SELECT pg_sleep(5)"));
  EXPECT_EQ(r.ec, errc::timeout) << r.message;
  bool alive = true;
  io_.run([&] { alive = c.alive(); });
  EXPECT_FALSE(alive);
}

TEST_F(PgConnectionTest, NoTimeoutLetsAStatementRunPastCommandTimeout) {
  ClientOptions o = server_.options();
  o.command_timeout = milliseconds(50);
  Connection& c = connected(o);
  const Result r = get(query(c, "SELECT 7 FROM pg_sleep(0.3)", {}, true));
  EXPECT_EQ(r.integer(), 7) << r.message;
}

TEST_F(PgConnectionTest, CancelEndsABlockedAdvisoryLockWith57014AndTheConnectionStaysUsable) {
  Connection& holder = connected();
  Connection& waiter = connected();
  ASSERT_FALSE(get(query(holder, "SELECT pg_advisory_lock(4242)")).ec);
  auto blocked = query(waiter, "SELECT pg_advisory_lock(4242)", {}, true);
  ASSERT_TRUE(server_says("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = " +
                              std::to_string(waiter.session_id()) + " AND NOT granted",
                          "1"));
  io_.run([&] { waiter.cancel(); });
  const Result r = get(std::move(blocked));
  EXPECT_EQ(r.ec, errc::server_error) << r.message;
  EXPECT_EQ(r.code, "57014") << r.message;
  EXPECT_EQ(get(query(waiter, "SELECT 3")).integer(), 3);
}

TEST_F(PgConnectionTest, TerminatingTheIdleBackendCallsOnDropAndTheConnectionIsNotAlive) {
  Connection& c = make(server_.options());
  auto dropped = std::make_shared<std::promise<std::string>>();
  io_.run([&] { c.on_drop([dropped](std::string why) { dropped->set_value(why); }); });
  ASSERT_FALSE(open(c).ec);
  ASSERT_FALSE(get(query(c, "SELECT 1")).ec);
  ASSERT_TRUE(server_.terminate_backend(c.session_id()));
  auto why = dropped->get_future();
  ASSERT_EQ(why.wait_for(kBound), std::future_status::ready) << "on_drop was not called";
  EXPECT_NE(why.get().find("PostgreSQL 127.0.0.1:"), std::string::npos);
  bool alive = true;
  io_.run([&] { alive = c.alive(); });
  EXPECT_FALSE(alive);
}

TEST_F(PgConnectionTest, StoppingTheServerDuringAStatementEndsItWithConnectionLost) {
  Connection& c = connected();
  auto running = query(c, "SELECT pg_sleep(60)", {}, true);
  ASSERT_TRUE(server_says("SELECT count(*) FROM pg_stat_activity WHERE pid = " +
                              std::to_string(c.session_id()) + " AND state = 'active'",
                          "1"));
  server_.stop();
  const Result r = get(std::move(running));
  EXPECT_EQ(r.ec, errc::connection_lost) << r.message;
}

TEST_F(PgConnectionTest, CloseEndsTheRunningAndTheQueuedStatementsWithClosed) {
  Connection& c = connected();
  bool dropped = false;
  std::future<Result> running, queued;
  io_.run([&] {
    c.on_drop([&](std::string) { dropped = true; });
    auto r1 = std::make_shared<std::promise<Result>>();
    auto r2 = std::make_shared<std::promise<Result>>();
    running = r1->get_future();
    queued = r2->get_future();
    c.query("SELECT pg_sleep(5)", {}, [r1](Result r) { r1->set_value(r); });
    c.query("SELECT 1", {}, [r2](Result r) { r2->set_value(r); });
    c.close();
  });
  EXPECT_EQ(get(std::move(running)).ec, errc::closed);
  EXPECT_EQ(get(std::move(queued)).ec, errc::closed);
  io_.run([&] { EXPECT_FALSE(dropped) << "on_drop must not be called after close()"; });
}

TEST_F(PgConnectionTest, TheServerRestartsOnTheSamePortWithTheSameData) {
  server_.sql(
      "CREATE TABLE kept (v int); INSERT INTO kept VALUES (5); GRANT SELECT ON kept TO distlock");
  server_.restart();
  Connection& c = connected();
  EXPECT_EQ(get(query(c, "SELECT v FROM kept")).integer(), 5);
}

}  // namespace
}  // namespace distlock::backend::sql
