// The lock on MySQL/MariaDB (GET_LOCK) and PostgreSQL (advisory locks),
// beyond the contract every backend passes (tests/zookeeper/
// lock_contract_test.cpp): the connection is the lease, and what follows
// from that: a killed connection, a restarted server, a silent link, a
// stopped holder, the pool's bound, the name mapping, fencing by the
// counter table, and what these servers refuse. Each body runs on both.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "distlock/client.hpp"
#include "distlock/fair_lock.hpp"
#include "distlock/read_write_lock.hpp"
#include "distlock/semaphore.hpp"
#include "fault/fault_support.hpp"
#include "support/free_ports.hpp"
#include "support/mariadb_server.hpp"
#include "support/postgres_server.hpp"
#include "support/tcp_proxy.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;

// One real server, as these tests need it.
class Server {
 public:
  virtual ~Server() = default;
  virtual ClientOptions options() const = 0;
  virtual std::string uri() const = 0;
  // As the server's administrator: ends the session holding the lock
  // `name` (exclusively), as an operator's KILL / pg_terminate_backend.
  virtual void kill_holder(const std::string& name) = 0;
  // The server's answer to `sql`, run as its administrator.
  virtual std::string admin(const std::string& sql) = 0;
  virtual void restart() = 0;
  virtual bool postgresql() const = 0;
};

class Postgres final : public Server {
 public:
  ClientOptions options() const override { return server_.options(); }
  std::string uri() const override { return server_.uri(); }
  void kill_holder(const std::string& name) override {
    server_.sql("SELECT pg_terminate_backend(pid)" + lock_rows(name));
  }
  std::string admin(const std::string& sql) override { return server_.sql(sql); }
  void restart() override { server_.restart(); }
  bool postgresql() const override { return true; }

  // The documented key of `name` (SHA-256, its first 8 bytes, big-endian),
  // computed by the server, as SQL text.
  static std::string key_of(const std::string& name) {
    return "('x' || substr(encode(sha256(convert_to('" + name +
           "', 'UTF8')), 'hex'), 1, 16))::bit(64)::bigint";
  }
  // The pg_locks rows of the exclusive advisory lock `name`: a bigint key's
  // high half is classid, its low half objid, objsubid 1.
  static std::string lock_rows(const std::string& name) {
    const std::string key = "(" + key_of(name) + ")";
    return " FROM pg_locks WHERE locktype = 'advisory' AND granted AND mode = 'ExclusiveLock' "
           "AND classid = ((" +
           key + " >> 32) & 4294967295)::oid AND objid = (" + key +
           " & 4294967295)::oid AND objsubid = 1";
  }

 private:
  test::PostgresServer server_;
};

class MariaDb final : public Server {
 public:
  ClientOptions options() const override { return server_.options(); }
  std::string uri() const override { return server_.uri(); }
  void kill_holder(const std::string& name) override {
    const auto id = server_.root_query("SELECT IS_USED_LOCK('" + name + "')");
    ASSERT_TRUE(id.has_value()) << "nobody holds " << name;
    server_.kill_connection(std::stoll(*id));
  }
  std::string admin(const std::string& sql) override {
    return server_.root_query(sql).value_or("NULL");
  }
  void restart() override { server_.restart(); }
  bool postgresql() const override { return false; }

 private:
  test::MariaDbServer server_;
};

enum class Kind { postgresql, mariadb };

std::string kind_name(const testing::TestParamInfo<Kind>& info) {
  return info.param == Kind::postgresql ? "PostgreSQL" : "MariaDB";
}

// Records the lease-loss events of a Client.
class Losses {
 public:
  void operator()(const LeaseLostEvent& e) {
    std::lock_guard lock(mutex_);
    events_.push_back(e.reason);
    changed_.notify_all();
  }
  // Waits (at most `bound`) until `n` events arrived.
  bool wait(std::size_t n, std::chrono::milliseconds bound) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, bound, [&] { return events_.size() >= n; });
  }
  std::vector<LeaseLostEvent::Reason> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<LeaseLostEvent::Reason> events_;
};

class SqlLock : public testing::TestWithParam<Kind> {
 protected:
  SqlLock() {
    if (GetParam() == Kind::postgresql) {
      server_ = std::make_unique<Postgres>();
    } else {
      server_ = std::make_unique<MariaDb>();
    }
  }

  // A Client whose losses are recorded in `losses`, with the periodic
  // liveness check an hour apart: only the watched socket can tell it of a
  // drop within the tests' bounds.
  Client client_with(std::shared_ptr<Losses> losses,
                     std::chrono::milliseconds check = std::chrono::hours(1)) {
    ClientOptions o = server_->options();
    o.connection_check_interval = check;
    o.on_lease_lost = [losses](const LeaseLostEvent& e) { (*losses)(e); };
    return Client(o);
  }

  std::unique_ptr<Server> server_;
};

TEST_P(SqlLock, AHolderWhoseConnectionIsKilledIsToldAtOnceAndAnotherClientGetsIt) {
  auto losses = std::make_shared<Losses>();
  Client a = client_with(losses);
  Client b(server_->uri());
  Lease lease = a.lock("killed").acquire();
  const std::stop_token stop = lease.stop_token();
  ASSERT_FALSE(b.lock("killed").try_lock());
  server_->kill_holder("killed");
  // The liveness check is an hour away: the watched socket tells it.
  ASSERT_TRUE(losses->wait(1, 20s)) << "the holder was not told";
  EXPECT_EQ(losses->events().front(), LeaseLostEvent::Reason::expired);
  EXPECT_TRUE(stop.stop_requested());
  EXPECT_FALSE(lease.valid());
  Lock other = b.lock("killed");
  EXPECT_TRUE(other.try_lock_for(20s)) << "the server did not release the killed session's lock";
  std::error_code ec;
  lease.release(ec);
  EXPECT_EQ(ec, errc::lease_lost) << ec.message();
  other.unlock();
}

TEST_P(SqlLock, EveryHolderIsToldWhenTheServerRestarts) {
  auto losses = std::make_shared<Losses>();
  Client a = client_with(losses);
  Lease one = a.lock("restart-1").acquire();
  Lock two = a.lock("restart-2");
  two.lock();
  server_->restart();
  ASSERT_TRUE(losses->wait(2, 30s)) << "not every holder was told";
  for (auto reason : losses->events()) EXPECT_EQ(reason, LeaseLostEvent::Reason::expired);
  EXPECT_FALSE(one.valid());
  EXPECT_FALSE(two.lease_valid());
  std::error_code ec;
  two.unlock(ec);
  EXPECT_EQ(ec, errc::lease_lost) << ec.message();
  // The Client goes on with new connections.
  Lock again = a.lock("restart-1");
  EXPECT_TRUE(again.try_lock_for(20s));
  again.unlock();
}

TEST_P(SqlLock, ASilentLinkLosesTheHoldingByTheLivenessCheck) {
  ClientOptions o = server_->options();
  test::TcpProxy proxy(o.port);
  o.port = proxy.port();
  o.connection_check_interval = 200ms;
  o.command_timeout = 1s;
  auto losses = std::make_shared<Losses>();
  o.on_lease_lost = [losses](const LeaseLostEvent& e) { (*losses)(e); };
  Client a(o);
  Lease lease = a.lock("silent").acquire();
  proxy.hold();  // nothing is reset: no FIN, no RST, only silence
  ASSERT_TRUE(losses->wait(1, 20s)) << "a silent link went unnoticed";
  EXPECT_EQ(losses->events().front(), LeaseLostEvent::Reason::expired);
  EXPECT_TRUE(lease.stop_token().stop_requested());
  proxy.resume();
}

TEST_P(SqlLock, AStoppedHolderProcessKeepsItsLockWhileItsConnectionLives) {
  fault::Worker holder(
      std::vector<std::string>{DISTLOCK_FAULT_WORKER, "hold", server_->uri(), "stopped"});
  const auto acquired = holder.read_line(30s);
  ASSERT_TRUE(acquired && acquired->rfind("acquired", 0) == 0) << acquired.value_or("nothing");
  holder.process().signal(SIGSTOP);
  // The database's model: the lock is the connection's, and a stopped
  // process's connection lives on. Nothing but a fencing token protects the
  // resource from it when it wakes (docs/backends.md).
  Client b(server_->uri());
  Lock lock = b.lock("stopped");
  EXPECT_FALSE(lock.try_lock_for(1s)) << "the stopped holder's lock was taken";
  holder.process().signal(SIGCONT);
  holder.process().signal(SIGUSR1);
  const auto result = holder.read_line(30s);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(fault::field(*result, "valid"), "1") << *result;
  EXPECT_EQ(fault::field(*result, "unlock"), "none") << *result;
  EXPECT_TRUE(lock.try_lock_for(20s));
  lock.unlock();
}

TEST_P(SqlLock, AStoppedHolderLosesItsLockWhenTheServersIdleLimitEndsItsSession) {
  // Checks every 200 ms, 300 ms to answer: the server ends a session idle
  // for 3 x 500 ms (MySQL: 2 s, whole seconds), and its locks with it.
  fault::Worker holder(std::vector<std::string>{
      DISTLOCK_FAULT_WORKER, "hold",
      server_->uri() + "?connection_check_interval_ms=200&command_timeout_ms=300", "idle-limit",
      "wait-loss"});
  const auto acquired = holder.read_line(30s);
  ASSERT_TRUE(acquired && acquired->rfind("acquired", 0) == 0) << acquired.value_or("nothing");
  holder.process().signal(SIGSTOP);
  // The holder has no lease to run out: only the server's idle limit frees
  // the lock of a process that stopped.
  Client b(server_->uri());
  Lock lock = b.lock("idle-limit");
  EXPECT_TRUE(lock.try_lock_for(20s)) << "the stopped holder's session was not ended";
  holder.process().signal(SIGCONT);
  holder.process().signal(SIGUSR1);
  const auto result = holder.read_line(30s);
  ASSERT_TRUE(result.has_value());
  // Resumed, it finds its connection closed: told, its lease invalid.
  EXPECT_EQ(fault::field(*result, "stop"), "1") << *result;
  EXPECT_EQ(fault::field(*result, "valid"), "0") << *result;
  lock.unlock();
}

TEST_P(SqlLock, FencingTokensAreTheCounterRowUnderTheLock) {
  Client a(server_->uri());
  Lock lock = a.fenced_lock("fenced-row");
  lock.lock();
  const auto first = lock.fencing_token();
  lock.unlock();
  lock.lock();
  const auto second = lock.fencing_token();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(*second, *first + 1);
  // The documented table holds the last token handed out.
  const std::string row =
      server_->postgresql()
          ? server_->admin("SELECT token FROM distlock_fence WHERE lock_key = " +
                           Postgres::key_of("fenced-row"))
          : server_->admin(
                "SELECT token FROM distlock_test.distlock_fence WHERE lock_name = 'fenced-row'");
  EXPECT_EQ(row, std::to_string(*second));
  lock.unlock();
}

TEST_P(SqlLock, MaxConnectionsBoundsTheHoldsAndAnAcquireWaitsForAFreedOne) {
  ClientOptions o = server_->options();
  o.max_connections = 1;
  Client a(o);
  Lease first = a.lock("pool-a").acquire();
  // Another name, but no connection left to hold it with.
  EXPECT_FALSE(a.lock("pool-b").try_acquire_for(200ms).has_value());
  std::promise<bool> got;
  std::thread waiter([&] {
    auto lease = a.lock("pool-b").try_acquire_for(20s);
    got.set_value(lease.has_value());
  });
  auto future = got.get_future();
  EXPECT_EQ(future.wait_for(200ms), std::future_status::timeout);
  first.release();
  ASSERT_EQ(future.wait_for(25s), std::future_status::ready);
  EXPECT_TRUE(future.get()) << "the freed connection did not go to the waiter";
  waiter.join();
}

TEST_P(SqlLock, AConnectionReusedForAnotherWaitWaitsAsTheNewCallSays) {
  Client a(server_->uri());
  ClientOptions o = server_->options();
  o.max_connections = 1;  // every acquire of b runs on the same connection
  Client b(o);
  Lock held = a.lock("reused");
  held.lock();
  EXPECT_FALSE(b.lock("reused").try_lock_for(200ms));
  // The same connection now waits without a limit (PostgreSQL: its
  // lock_timeout must not stay at the 200 ms of the call before).
  std::promise<std::error_code> got;
  std::thread waiter([&] {
    std::error_code ec;
    Lock lock = b.lock("reused");
    lock.lock(ec);
    got.set_value(ec);
    if (!ec) lock.unlock();
  });
  auto future = got.get_future();
  EXPECT_EQ(future.wait_for(1s), std::future_status::timeout) << "it stopped waiting";
  held.unlock();
  ASSERT_EQ(future.wait_for(20s), std::future_status::ready) << "the release did not wake it";
  EXPECT_FALSE(future.get());
  waiter.join();
}

TEST_P(SqlLock, LongNamesMapToTheDocumentedServerLock) {
  Client a(server_->uri());
  Client b(server_->uri());
  const std::string prefix(64, 'n');
  const std::string one = prefix + "-one";  // over MySQL's 64 characters
  const std::string two = prefix + "-two";
  Lock held = a.lock(one);
  held.lock();
  EXPECT_FALSE(b.lock(one).try_lock()) << "the same long name is the same lock";
  EXPECT_TRUE(b.lock(two).try_lock()) << "names sharing 64 characters are different locks";
  b.lock(two).force_unlock();
  if (server_->postgresql()) {
    EXPECT_EQ(server_->admin("SELECT count(*)" + Postgres::lock_rows(one)), "1");
  } else {
    // A name over 64 bytes is the hex SHA-256 of the name.
    EXPECT_NE(server_->admin("SELECT IS_USED_LOCK(SHA2('" + one + "', 256))"), "NULL");
  }
  held.unlock();
}

TEST_P(SqlLock, WhatTheServerCannotDoIsRefusedAtOnceNamingIt) {
  Client a(server_->uri());
  const std::string server = server_->postgresql() ? "PostgreSQL" : "MySQL";
  auto refused = [&](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << what << " was not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), errc::not_supported) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(server.substr(0, 5)), std::string::npos) << e.what();
    }
  };
  refused([&] { a.fair_lock("f"); }, "a fair lock");
  refused([&] { a.semaphore("s"); }, "a semaphore");
  refused([&] { a.lock("d", LockOptions{.lock_delay = 1s}); }, "a lock-delay");
  refused([&] { a.lock("l").lock(10s); }, "a fixed lease");
  if (!server_->postgresql()) refused([&] { a.read_write_lock("rw"); }, "a read-write lock");
}

TEST_P(SqlLock, WrongCredentialsAndAnUnreachableServerFailNamingNeitherPassword) {
  ClientOptions o = server_->options();
  o.password = "Sekrit-Wrong-9";
  try {
    Client c(o);
    ADD_FAILURE() << "connected with a wrong password";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::auth_failed) << e.what();
    EXPECT_EQ(std::string(e.what()).find("Sekrit"), std::string::npos) << e.what();
  }
  o = server_->options();
  o.port = test::pick_free_ports(1).front();
  try {
    Client c(o);
    ADD_FAILURE() << "connected to a port nobody listens on";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), errc::connection_failed) << e.what();
    EXPECT_EQ(std::string(e.what()).find(server_->options().password), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Servers,
                         SqlLock,
                         testing::Values(Kind::postgresql, Kind::mariadb),
                         kind_name);

// PostgreSQL's shared advisory locks are the read side of a read-write lock.
TEST(PostgresReadWriteLock, ReadersShareAndAWriterExcludesThem) {
  test::PostgresServer server;
  Client a(server.uri());
  Client b(server.uri());
  ReadWriteLock on_a = a.read_write_lock("doc");
  ReadWriteLock on_b = b.read_write_lock("doc");
  on_a.read_lock().lock();
  EXPECT_TRUE(on_b.read_lock().try_lock()) << "readers do not share";
  EXPECT_FALSE(on_b.write_lock().try_lock()) << "a writer got in while others read";
  EXPECT_TRUE(on_a.read_lock().is_locked());
  EXPECT_FALSE(on_a.write_lock().is_locked());
  on_a.read_lock().unlock();
  on_b.read_lock().unlock();
  EXPECT_TRUE(on_b.write_lock().try_lock());
  EXPECT_FALSE(on_a.read_lock().try_lock()) << "a reader got in while one writes";
  EXPECT_FALSE(on_a.write_lock().try_lock());
  on_b.write_lock().unlock();
  EXPECT_TRUE(on_a.write_lock().try_lock());
  on_a.write_lock().unlock();
}

}  // namespace
}  // namespace distlock
