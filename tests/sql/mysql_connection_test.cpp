// The MySQL/MariaDB driver (src/backend/mysql_connection.cpp) against a real
// mariadbd (support/mariadb_server.hpp), its io_context run on a thread.
#include <gtest/gtest.h>

#include <asio/post.hpp>
#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "backend/sql_connection.hpp"
#include "distlock/error.hpp"
#include "support/app_thread.hpp"
#include "support/free_ports.hpp"
#include "support/mariadb_server.hpp"
#include "support/poll_until.hpp"

namespace distlock::backend::sql {
namespace {

using namespace std::chrono_literals;
using test::AppThread;
using test::MariaDbServer;

constexpr auto kBound = 20s;  // every wait below; a hang fails the test

// Runs f on the I/O thread and returns its result.
template <class F>
auto on_io(asio::io_context& io, F f) -> decltype(f()) {
  auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::move(f));
  auto result = task->get_future();
  asio::post(io, [task] { (*task)(); });
  if (result.wait_for(kBound) != std::future_status::ready) {
    throw std::runtime_error("the I/O thread did not run the call within the bound");
  }
  return result.get();
}

// One driver connection, every member called on the I/O thread.
class Session {
 public:
  Session(AppThread& app, ClientOptions options) : app_(app), options_(std::move(options)) {
    connection_ = on_io(app_.io(), [this] { return make_mysql_connection(options_, app_.io()); });
  }
  ~Session() {
    on_io(app_.io(), [this] {
      connection_.reset();
      return 0;
    });
  }

  // The code open() ends with; its message in *message.
  std::error_code open(std::string* message = nullptr) {
    auto done = std::make_shared<std::promise<std::pair<std::error_code, std::string>>>();
    auto result = done->get_future();
    on_io(app_.io(), [&] {
      connection_->open([done](std::error_code ec, std::string m) {
        done->set_value({ec, std::move(m)});
      });
      return 0;
    });
    if (result.wait_for(kBound) != std::future_status::ready) throw std::runtime_error("open hung");
    auto [ec, m] = result.get();
    if (message != nullptr) *message = m;
    return ec;
  }
  std::future<Result> submit(std::string sql, Params params = {}, bool no_timeout = false) {
    auto done = std::make_shared<std::promise<Result>>();
    on_io(app_.io(), [&] {
      connection_->query(
          sql, params, [done](Result r) { done->set_value(std::move(r)); }, no_timeout);
      return 0;
    });
    return done->get_future();
  }
  Result run(std::string sql, Params params = {}, bool no_timeout = false) {
    return wait(submit(std::move(sql), std::move(params), no_timeout));
  }
  static Result wait(std::future<Result> f) {
    if (f.wait_for(kBound) != std::future_status::ready) throw std::runtime_error("query hung");
    return f.get();
  }
  template <class F>
  auto call(F f) {
    return on_io(app_.io(), [this, f] { return f(*connection_); });
  }
  std::int64_t id() {
    return call([](Connection& c) { return c.session_id(); });
  }
  bool alive() {
    return call([](Connection& c) { return c.alive(); });
  }

 private:
  AppThread& app_;
  ClientOptions options_;
  std::unique_ptr<Connection> connection_;
};

class MysqlConnection : public ::testing::Test {
 protected:
  // One server for the suite, started by the first test: an exception here
  // fails that test (gtest turns one from SetUpTestSuite into skips).
  void SetUp() override {
    if (server_ != nullptr) return;
    const auto start = std::chrono::steady_clock::now();
    server_ = new MariaDbServer();
    std::cout << "MariaDbServer started in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count()
              << " ms\n";
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  std::unique_ptr<Session> connected(ClientOptions options = server_->options()) {
    auto s = std::make_unique<Session>(app_, std::move(options));
    std::string message;
    const std::error_code ec = s->open(&message);
    if (ec) throw std::runtime_error("open failed: " + message);
    return s;
  }
  std::string unique(const std::string& what) {
    return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "/" +
           what;
  }
  // Waits until root sees session `id` running a statement that contains
  // `text` (its lock wait has begun).
  static bool wait_until_running(std::int64_t id, const std::string& text) {
    return test::poll_until(
        [&] {
          return server_->root_query(
                     "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " +
                     std::to_string(id) + " AND INFO LIKE '%" + text + "%'") == "1";
        },
        std::chrono::steady_clock::now() + kBound);
  }

  static MariaDbServer* server_;
  AppThread app_;
};

MariaDbServer* MysqlConnection::server_ = nullptr;

TEST_F(MysqlConnection, OpensAndAnswersSelectOneAndParametersRoundTripUnchanged) {
  auto s = connected();
  EXPECT_EQ(s->run("SELECT 1").value, "1");
  const std::string tricky = "it's \"quoted\" \\ back\\\\slash ? '' `x` -- ünïcødé 漢字 😀";
  const Result echoed = s->run("SELECT ?", {tricky});
  EXPECT_FALSE(echoed.ec) << echoed.message;
  EXPECT_EQ(echoed.value, tricky);
  // A ? inside quotes is text, not a marker.
  EXPECT_EQ(s->run("SELECT CONCAT(?, '?', ?)", {"a", "b"}).value, "a?b");
  EXPECT_EQ(s->run("SELECT NULL").value, std::nullopt);
  EXPECT_EQ(s->run("SELECT CONNECTION_ID()").integer(), s->id());
}

TEST_F(MysqlConnection, WrongPasswordFailsWithAuthFailedAndTheMessageOmitsThePassword) {
  ClientOptions options = server_->options();
  options.password = "not-the-Secret-9f3a";
  Session s(app_, options);
  std::string message;
  EXPECT_EQ(s.open(&message), make_error_code(errc::auth_failed)) << message;
  EXPECT_EQ(message.find(options.password), std::string::npos) << message;
  EXPECT_NE(message.find("MySQL 127.0.0.1:" + std::to_string(server_->port())), std::string::npos)
      << message;
}

TEST_F(MysqlConnection, UnreachablePortFailsWithConnectionFailed) {
  ClientOptions options = server_->options();
  options.port = test::pick_free_ports(1)[0];
  Session s(app_, options);
  std::string message;
  EXPECT_EQ(s.open(&message), make_error_code(errc::connection_failed)) << message;
  EXPECT_FALSE(s.alive());
}

TEST_F(MysqlConnection, QueriesQueueAndCompleteInOrder) {
  auto s = connected();
  // Submitted together behind a slow one, and recorded as they complete.
  auto order = std::make_shared<std::vector<std::string>>();
  auto all_done = std::make_shared<std::promise<void>>();
  s->call([&](Connection& c) {
    c.query("SELECT SLEEP(0.2)", {},
            [order](Result r) { order->push_back(r.value.value_or("?")); });
    for (int i = 0; i < 5; ++i) {
      c.query("SELECT ?", {std::to_string(i)}, [order, all_done, i](Result r) {
        order->push_back(r.value.value_or("?"));
        if (i == 4) all_done->set_value();
      });
    }
    return 0;
  });
  ASSERT_EQ(all_done->get_future().wait_for(kBound), std::future_status::ready);
  const std::vector<std::string> seen = s->call([order](Connection&) { return *order; });
  EXPECT_EQ(seen, (std::vector<std::string>{"0", "0", "1", "2", "3", "4"}));
}

TEST_F(MysqlConnection, StatementPastCommandTimeoutFailsWithTimeoutAndKillsTheConnection) {
  ClientOptions options = server_->options();
  options.command_timeout = 200ms;
  auto s = connected(options);
  const Result r = s->run("SELECT SLEEP(5)");
  EXPECT_EQ(r.ec, make_error_code(errc::timeout)) << r.message;
  EXPECT_FALSE(s->alive());
}

TEST_F(MysqlConnection, GetLockReturnsZeroWhenAnotherSessionHoldsItAndOneWhenFree) {
  auto a = connected();
  auto b = connected();
  const std::string name = unique("lock");
  EXPECT_EQ(a->run("SELECT GET_LOCK(?, ?)", {name, "0"}).value, "1");
  EXPECT_EQ(b->run("SELECT GET_LOCK(?, ?)", {name, "1"}, true).value, "0");
  // A fractional timeout is accepted: it waits about that long, then 0.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(b->run("SELECT GET_LOCK(?, ?)", {name, "0.25"}, true).value, "0");
  std::cout << "GET_LOCK(name, 0.25) held elsewhere returned after "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count()
            << " ms\n";
  EXPECT_EQ(a->run("SELECT RELEASE_LOCK(?)", {name}).value, "1");
  EXPECT_EQ(b->run("SELECT GET_LOCK(?, ?)", {name, "0"}).value, "1");
}

TEST_F(MysqlConnection, GetLockNamesUpTo192BytesWorkAndLongerOnesFailWith1059) {
  auto s = connected();
  EXPECT_EQ(s->run("SELECT GET_LOCK(?, 0)", {std::string(192, 'x')}).value, "1");
  const Result longer = s->run("SELECT GET_LOCK(?, 0)", {std::string(193, 'x')});
  EXPECT_EQ(longer.ec, make_error_code(errc::server_error));
  EXPECT_EQ(longer.code, "1059") << longer.message;  // identifier name too long
  // The bound is in bytes: 48 four-byte characters fit, 49 do not.
  std::string emoji;
  for (int i = 0; i < 49; ++i) emoji += "😀";
  EXPECT_EQ(s->run("SELECT GET_LOCK(?, 0)", {emoji}).code, "1059");
  EXPECT_TRUE(s->alive());
}

TEST_F(MysqlConnection, GetLockWithNegativeTimeoutReturnsNullAtOnceOnMariaDb) {
  // MySQL 5.7+ waits forever on a negative timeout; MariaDB 10.11 warns
  // (1411) and returns NULL.
  auto s = connected();
  EXPECT_EQ(s->run("SELECT GET_LOCK(?, -1)", {unique("lock")}).value, std::nullopt);
}

TEST_F(MysqlConnection, CancelEndsABlockedGetLockAndTheConnectionStaysUsable) {
  auto holder = connected();
  auto waiter = connected();
  const std::string name = unique("lock");
  ASSERT_EQ(holder->run("SELECT GET_LOCK(?, 0)", {name}).value, "1");
  auto blocked = waiter->submit("SELECT GET_LOCK(?, ?)", {name, "3600"}, true);
  ASSERT_TRUE(wait_until_running(waiter->id(), "GET_LOCK"));
  waiter->call([](Connection& c) {
    c.cancel();
    return 0;
  });
  const Result r = Session::wait(std::move(blocked));
  std::cout << "cancelled GET_LOCK: ec=" << r.ec.message() << " code=" << r.code
            << " value=" << r.value.value_or("NULL") << " message=" << r.message << "\n";
  EXPECT_NE(r.value, "1") << "the lock must not have been granted";
  EXPECT_TRUE(waiter->alive());
  EXPECT_EQ(waiter->run("SELECT 1").value, "1");
}

TEST_F(MysqlConnection, KillWhileIdleCallsOnDrop) {
  auto s = connected();
  auto dropped = std::make_shared<std::promise<std::string>>();
  s->call([dropped](Connection& c) {
    c.on_drop([dropped](std::string why) { dropped->set_value(std::move(why)); });
    return 0;
  });
  server_->kill_connection(s->id());
  auto why = dropped->get_future();
  ASSERT_EQ(why.wait_for(10s), std::future_status::ready) << "on_drop was not called";
  std::cout << "on_drop: " << why.get() << "\n";
  EXPECT_FALSE(s->alive());
}

TEST_F(MysqlConnection, KillWhileAQueryRunsEndsItWithConnectionLostAndCallsOnDrop) {
  auto s = connected();
  auto dropped = std::make_shared<std::promise<std::string>>();
  s->call([dropped](Connection& c) {
    c.on_drop([dropped](std::string why) { dropped->set_value(std::move(why)); });
    return 0;
  });
  auto running = s->submit("SELECT SLEEP(60)", {}, true);
  ASSERT_TRUE(wait_until_running(s->id(), "SLEEP"));
  server_->kill_connection(s->id());
  const Result r = Session::wait(std::move(running));
  std::cout << "query of a killed session: code=" << r.code << " message=" << r.message << "\n";
  EXPECT_EQ(r.ec, make_error_code(errc::connection_lost)) << r.code << " " << r.message;
  ASSERT_EQ(dropped->get_future().wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(s->alive());
}

TEST_F(MysqlConnection, RestartedServerKeepsItsPortAndUser) {
  MariaDbServer own;
  const std::uint16_t port = own.port();
  own.restart();
  EXPECT_EQ(own.port(), port);
  auto s = connected(own.options());
  EXPECT_EQ(s->run("SELECT DATABASE()").value, MariaDbServer::kDatabase);
}

TEST_F(MysqlConnection, ServerStoppedWhileAQueryRunsEndsItWithConnectionLost) {
  MariaDbServer own;
  auto s = connected(own.options());
  auto running = s->submit("SELECT SLEEP(60)", {}, true);
  ASSERT_TRUE(test::poll_until(
      [&] {
        return own.root_query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " +
                              std::to_string(s->id()) + " AND INFO LIKE '%SLEEP%'") == "1";
      },
      std::chrono::steady_clock::now() + kBound));
  own.stop();
  const Result r = Session::wait(std::move(running));
  std::cout << "query during shutdown: code=" << r.code << " message=" << r.message << "\n";
  EXPECT_EQ(r.ec, make_error_code(errc::connection_lost)) << r.code << " " << r.message;
  EXPECT_FALSE(s->alive());
}

TEST_F(MysqlConnection, CloseEndsTheRunningAndQueuedQueriesWithClosed) {
  auto s = connected();
  auto running = s->submit("SELECT SLEEP(5)", {}, true);
  auto queued = s->submit("SELECT 1");
  s->call([](Connection& c) {
    c.close();
    return 0;
  });
  EXPECT_EQ(Session::wait(std::move(running)).ec, make_error_code(errc::closed));
  EXPECT_EQ(Session::wait(std::move(queued)).ec, make_error_code(errc::closed));
  EXPECT_FALSE(s->alive());
  EXPECT_EQ(s->run("SELECT 1").ec, make_error_code(errc::closed));
}

}  // namespace
}  // namespace distlock::backend::sql
