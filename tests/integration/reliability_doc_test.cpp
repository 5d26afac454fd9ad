// Keeps docs/reliability.md true. The fault table must name, for every row,
// tests that exist, and every fault test must appear in it. Every row of the
// bad-input table is performed here against a real server and must return
// the error the row documents; every check here must have a row.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <asio/use_future.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "distlock/distlock.hpp"
#include "distlock/fencing.hpp"
#include "integration/bad_input.hpp"
#include "support/redis_server.hpp"
#include "support/refusing_port.hpp"

namespace distlock {
namespace bad_input {

std::vector<CheckMap (*)()>& registry() {
  static std::vector<CheckMap (*)()> all;
  return all;
}

bool register_checks(CheckMap (*make)()) {
  registry().push_back(make);
  return true;
}

CheckMap registered_checks() {
  CheckMap all;
  for (auto make : registry()) {
    CheckMap part = make();
    all.merge(part);
  }
  return all;
}

}  // namespace bad_input

namespace {

using namespace std::chrono_literals;
using namespace bad_input;
using test::RedisServer;
namespace fs = std::filesystem;

const fs::path kSource = DISTLOCK_SOURCE_DIR;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string trim(std::string s) {
  const auto begin = s.find_first_not_of(" \t");
  if (begin == std::string::npos) return {};
  const auto end = s.find_last_not_of(" \t");
  return s.substr(begin, end - begin + 1);
}

std::string strip_ticks(std::string s) {
  s = trim(std::move(s));
  if (s.size() >= 2 && s.front() == '`' && s.back() == '`') s = s.substr(1, s.size() - 2);
  return s;
}

// The rows (cells trimmed) of the first table after the line `heading`,
// without its header and separator lines.
std::vector<std::vector<std::string>> table_after(const std::string& doc,
                                                  const std::string& heading) {
  std::istringstream lines(doc);
  std::string line;
  while (std::getline(lines, line) && line != heading) {
  }
  std::vector<std::vector<std::string>> rows;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;
      continue;
    }
    in_table = true;
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|') {
        cells.push_back(trim(cell));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    rows.push_back(std::move(cells));
  }
  if (rows.size() < 2) return {};
  rows.erase(rows.begin(), rows.begin() + 2);  // header and |---|
  return rows;
}

// "Suite.Name" of every TEST / TEST_F under tests/, from the sources.
std::set<std::string> tests_in(const std::vector<std::string>& folders) {
  std::set<std::string> names;
  const std::regex test(R"(\bTEST(?:_F)?\(\s*(\w+)\s*,\s*(\w+)\s*\))");
  for (const auto& folder : folders) {
    for (const auto& entry : fs::directory_iterator(kSource / "tests" / folder)) {
      if (entry.path().extension() != ".cpp") continue;
      const std::string text = read_file(entry.path());
      for (std::sregex_iterator it(text.begin(), text.end(), test), end; it != end; ++it) {
        names.insert((*it)[1].str() + "." + (*it)[2].str());
      }
    }
  }
  return names;
}

TEST(ReliabilityDoc, EveryFaultRowNamesExistingTestsAndEveryFaultTestHasARow) {
  const std::string doc = read_file(kSource / "docs" / "reliability.md");
  const auto rows = table_after(doc, "## Faults");
  ASSERT_FALSE(rows.empty()) << "no table under '## Faults'";
  const auto all = tests_in({"unit", "integration", "fault"});
  const auto fault_tests = tests_in({"fault"});
  const std::regex name(R"(`(\w+\.\w+)`)");
  std::set<std::string> documented;
  for (const auto& row : rows) {
    ASSERT_GE(row.size(), 5u) << "a fault row needs 5 columns: " << row.front();
    const std::string& proofs = row.back();
    std::size_t named = 0;
    for (std::sregex_iterator it(proofs.begin(), proofs.end(), name), end; it != end; ++it) {
      const std::string test = (*it)[1].str();
      EXPECT_TRUE(all.count(test))
          << "docs/reliability.md names a test that does not exist: " << test;
      documented.insert(test);
      ++named;
    }
    EXPECT_GT(named, 0u) << "a fault row proved by no test: " << row.front();
  }
  for (const auto& test : fault_tests) {
    EXPECT_TRUE(documented.count(test)) << "fault test missing from docs/reliability.md: " << test;
  }
}

Check parsing(std::string uri) {
  return [uri](Env&) { return code_of([&] { ClientOptions::from_uri(uri); }); };
}

// Runs `f` inside a completion handler, on the Client's I/O thread.
std::error_code on_io_thread(Client& client, const std::function<std::error_code()>& f) {
  std::promise<std::error_code> result;
  client.async_command({"PING"}, [&](std::error_code, Value) { result.set_value(f()); });
  auto future = result.get_future();
  if (future.wait_for(10s) != std::future_status::ready) return errc::timeout;
  return future.get();
}

// Holds `name` on this thread, has another thread unlock it, and reports
// what that thread was told.
std::error_code unlock_from_other_thread(Env& env, Client& c, const std::string& name) {
  Lock lock = c.lock(name);
  lock.lock();
  const std::error_code ec = env.unchanged([&] {
    return std::async(std::launch::async,
                      [&] {
                        std::error_code e;
                        lock.unlock(e);
                        return e;
                      })
        .get();
  });
  lock.unlock();
  return ec;
}

// Locks on this thread, has the server lose the hold, and locks again before
// unlocking the lost hold.
std::error_code lock_again_after_loss(Env& env, Client& c) {
  Lock lock = c.lock("lost-hold");
  lock.lock();
  std::mutex m;
  std::condition_variable cv;
  bool stopped = false;
  std::stop_callback on_lost(lock.stop_token(), [&] {
    std::lock_guard g(m);
    stopped = true;
    cv.notify_all();
  });
  c.command("DEL", "lost-hold");
  {
    std::unique_lock g(m);
    if (!cv.wait_for(g, 10s, [&] { return stopped; })) return errc::timeout;
  }
  const std::error_code ec = env.unchanged([&] {
    std::error_code e;
    lock.lock(e);
    return e;
  });
  std::error_code ignored;
  lock.unlock(ignored);
  return ec;
}

std::error_code release_twice(Env& env, Client& c) {
  Lease lease = c.lock("twice").acquire();
  std::error_code ec;
  lease.release(ec);
  if (ec) return ec;
  return env.unchanged([&] {
    lease.release(ec);
    return ec;
  });
}

std::map<std::string, Check> uri_checks() {
  return {
      {"from_uri.empty", parsing("")},
      {"from_uri.scheme", parsing("http://127.0.0.1")},
      {"from_uri.no_slashes", parsing("redis:127.0.0.1")},
      {"from_uri.port_range", parsing("redis://127.0.0.1:70000")},
      {"from_uri.port_text", parsing("redis://127.0.0.1:abc")},
      {"from_uri.ipv6_open", parsing("redis://[::1")},
      {"from_uri.ipv6_bare", parsing("redis://::1:6379")},
      {"from_uri.db_text", parsing("redis://127.0.0.1/first")},
      {"from_uri.user_only", parsing("redis://alice@127.0.0.1")},
      {"from_uri.percent", parsing("redis://:%zz@127.0.0.1")},
      {"from_uri.unknown_option", parsing("redis://127.0.0.1?colour=red")},
      {"from_uri.option_twice", parsing("redis://127.0.0.1?db=1&db=2")},
      {"from_uri.timeout_zero", parsing("redis://127.0.0.1?command_timeout_ms=0")},
      {"from_uri.tls_option_plain", parsing("redis://127.0.0.1?ca_file=/x")},
      {"from_uri.coalesce_value", parsing("redis://127.0.0.1?coalesce=yes")},
      {"from_uri.preload_value", parsing("redis://127.0.0.1?preload_scripts=no")},
      {"from_uri.sharded_pubsub_value", parsing("redis://127.0.0.1?sharded_pubsub=yes")},
      {"from_uri.unix_relative", parsing("unix://redis.sock")},
      {"from_uri.client_name_space", parsing("redis://127.0.0.1?client_name=a%20b")},
      {"from_uri.zk_no_hosts", parsing("zookeeper://")},
      {"from_uri.zk_duplicate_host", parsing("zookeeper://127.0.0.1:2181,127.0.0.1")},
      {"from_uri.zk_user_only", parsing("zookeeper://alice@127.0.0.1")},
      {"from_uri.zk_chroot_trailing_slash", parsing("zookeeper://127.0.0.1/app/")},
      {"from_uri.zk_chroot_dotdot", parsing("zookeeper://127.0.0.1/a/../b")},
      {"from_uri.zk_chroot_reserved", parsing("zookeeper://127.0.0.1/zookeeper")},
      {"from_uri.zk_session_timeout_zero", parsing("zookeeper://127.0.0.1?session_timeout_ms=0")},
      {"from_uri.zk_redis_option", parsing("zookeeper://127.0.0.1?db=1")},
      {"from_uri.session_timeout_on_redis", parsing("redis://127.0.0.1?session_timeout_ms=5000")},
      {"from_uri.sql_host_list", parsing("mysql://127.0.0.1,127.0.0.2")},
      {"from_uri.sql_database_two_segments", parsing("postgresql://127.0.0.1/a/b")},
      {"from_uri.sql_max_connections_zero", parsing("mysql://127.0.0.1?max_connections=0")},
      {"from_uri.sql_check_interval_too_long",
       parsing("postgresql://127.0.0.1?connection_check_interval_ms=3600001")},
      {"from_uri.sql_tls_option_without_tls", parsing("mysql://127.0.0.1?ca_file=/x")},
      {"from_uri.sql_sslmode_prefer", parsing("postgresql://127.0.0.1?sslmode=prefer")},
      {"from_uri.sql_ssl_mode_twice", parsing("mysql://127.0.0.1?tls=true&ssl-mode=REQUIRED")},
      {"from_uri.sql_redis_option", parsing("mysql://127.0.0.1?db=1")},
      {"from_uri.pool_option_on_redis", parsing("redis://127.0.0.1?max_connections=4")},
  };
}

std::map<std::string, Check> client_checks() {
  return {
      {"client.refused",
       [](Env& env) {
         const std::string uri = "redis://127.0.0.1:" + std::to_string(env.refusing.port());
         return env.unchanged([&] { Client c(uri); });
       }},
      {"client.wrong_password",
       [](Env& env) {
         const std::string port = std::to_string(env.auth_server.port());
         return env.unchanged([&] { Client c("redis://:wrong@127.0.0.1:" + port); });
       }},
      {"client.db_out_of_range", constructing([](ClientOptions& o) { o.db = 99; })},
      {"options.host_empty", constructing([](ClientOptions& o) { o.host.clear(); })},
      {"options.port_zero", constructing([](ClientOptions& o) { o.port = 0; })},
      {"options.unix_relative", constructing([](ClientOptions& o) { o.unix_path = "redis.sock"; })},
      {"options.db_negative", constructing([](ClientOptions& o) { o.db = -1; })},
      {"options.connect_timeout_zero",
       constructing([](ClientOptions& o) { o.connect_timeout = 0ms; })},
      {"options.command_timeout_negative",
       constructing([](ClientOptions& o) { o.command_timeout = -1ms; })},
      {"options.reconnect_min_zero",
       constructing([](ClientOptions& o) { o.reconnect_min_delay = 0ms; })},
      {"options.reconnect_max_below_min", constructing([](ClientOptions& o) {
         o.reconnect_min_delay = 100ms;
         o.reconnect_max_delay = 50ms;
       })},
      {"options.max_queued_zero", constructing([](ClientOptions& o) { o.max_queued = 0; })},
      {"options.watchdog_short", constructing([](ClientOptions& o) { o.watchdog_timeout = 29ms; })},
      {"options.sharded_pubsub_out_of_range", constructing([](ClientOptions& o) {
         o.sharded_pubsub = static_cast<ClientOptions::ShardedPubsub>(7);
       })},
      {"options.user_without_password", constructing([](ClientOptions& o) {
         o.username = "alice";
         o.password.clear();
       })},
      {"options.tls_ca_missing", constructing([](ClientOptions& o) {
         o.tls.enabled = true;
         o.tls.ca_file = "/nonexistent/ca.pem";
       })},
      {"options.sql_max_connections_zero", constructing([](ClientOptions& o) {
         o.backend = ClientOptions::Backend::mysql;
         o.max_connections = 0;
       })},
      {"options.sql_check_interval_zero", constructing([](ClientOptions& o) {
         o.backend = ClientOptions::Backend::postgresql;
         o.connection_check_interval = 0ms;
       })},
      {"options.sql_unix_path", constructing([](ClientOptions& o) {
         o.backend = ClientOptions::Backend::mysql;
         o.unix_path = "/run/mysqld/mysqld.sock";
       })},
      {"options.sql_seeds", constructing([](ClientOptions& o) {
         o.backend = ClientOptions::Backend::postgresql;
         o.seeds = {{"127.0.0.1", 5432}};
       })},
      {"command.empty",
       on_client([](Client& c) { c.command(std::span<const std::string_view>()); })},
      {"command.unknown", on_client([](Client& c) { c.command("NO-SUCH-COMMAND"); })},
      {"command.wrong_arity", on_client([](Client& c) { c.command("GET"); })},
      {"command.after_close", on_closed_client([](Client& c) { c.command("PING"); })},
      {"command.on_io_thread", on_client([](Client& c) {
         return on_io_thread(c, [&] {
           std::error_code ec;
           const std::string_view args[] = {"PING"};
           c.command(args, ec);
           return ec;
         });
       })},
      {"async_command.empty",
       on_client([](Client& c) { c.async_command({}, asio::use_future).get(); })},
      {"async_command.after_close",
       on_closed_client([](Client& c) { c.async_command({"PING"}, asio::use_future).get(); })},
      {"lock.name_empty", on_client([](Client& c) { c.lock(""); })},
      {"lock.name_too_long", on_client([](Client& c) { c.lock(std::string(64 * 1024 + 1, 'x')); })},
      {"fenced_lock.name_empty", on_client([](Client& c) { c.fenced_lock(""); })},
      {"lock.moved_from_client", on_client([](Client& c) {
         Client taker = std::move(c);
         c.lock("x");  // NOLINT(bugprone-use-after-move): the case under test
       })},
  };
}

std::map<std::string, Check> lock_checks() {
  return {
      {"lock.lease_zero", on_client([](Client& c) { c.lock("bad").lock(0ms); })},
      {"lock.lease_negative", on_client([](Client& c) { c.lock("bad").lock(-5ms); })},
      {"try_lock_for.wait_negative",
       on_client([](Client& c) { c.lock("bad").try_lock_for(-1ms); })},
      {"try_lock_for.lease_zero",
       on_client([](Client& c) { c.lock("bad").try_lock_for(1s, 0ms); })},
      {"try_lock_for_ec.wait_negative", on_client([](Client& c) {
         std::error_code ec;
         c.lock("bad").try_lock_for(-1ms, std::nullopt, ec);
         return ec;
       })},
      {"try_lock_for_ec.lease_negative", on_client([](Client& c) {
         std::error_code ec;
         c.lock("bad").try_lock_for(0ms, -1ms, ec);
         return ec;
       })},
      {"unlock.not_held", on_client([](Client& c) {
         std::error_code ec;
         c.lock("never-locked").unlock(ec);
         return ec;
       })},
      {"unlock.other_thread",
       [](Env& env) {
         Client c(env.options());
         return unlock_from_other_thread(env, c, "held-here");
       }},
      {"lock.wrong_type",
       on_client_after(set_a_string, [](Client& c) { c.lock("a-string").lock(); })},
      {"lock.after_close", on_closed_client([](Client& c) { c.lock("x").lock(); })},
      {"lock.on_io_thread", on_client([](Client& c) {
         Lock lock = c.lock("io");
         return on_io_thread(c, [&] {
           std::error_code ec;
           lock.lock(ec);
           return ec;
         });
       })},
      {"lock.again_after_loss",
       [](Env& env) {
         Client c(env.options());
         return lock_again_after_loss(env, c);
       }},
      {"force_unlock.after_close", on_closed_client([](Client& c) { c.lock("x").force_unlock(); })},
      {"is_locked.after_close", on_closed_client([](Client& c) { c.lock("x").is_locked(); })},
      {"hold_count.wrong_type",
       on_client_after(set_a_string, [](Client& c) { c.lock("a-string").hold_count(); })},
      {"remaining_ttl.after_close",
       on_closed_client([](Client& c) { c.lock("x").remaining_ttl(); })},
      {"try_acquire_for.wait_negative",
       on_client([](Client& c) { c.lock("bad").try_acquire_for(-1ms); })},
      {"try_acquire_for.lease_zero",
       on_client([](Client& c) { c.lock("bad").try_acquire_for(1s, 0ms); })},
      {"try_acquire_for_ec.wait_negative", on_client([](Client& c) {
         std::error_code ec;
         c.lock("bad").try_acquire_for(-1ms, std::nullopt, ec);
         return ec;
       })},
      {"acquire.wrong_type",
       on_client_after(set_a_string, [](Client& c) { c.lock("a-string").acquire(); })},
      {"acquire.after_close", on_closed_client([](Client& c) { c.lock("x").acquire(); })},
      {"async_acquire.after_close",
       on_closed_client([](Client& c) { c.lock("x").async_acquire(asio::use_future).get(); })},
  };
}

std::map<std::string, Check> lease_and_fencing_checks() {
  return {
      {"release.empty_lease",
       [](Env&) {
         Lease empty;
         std::error_code ec;
         empty.release(ec);
         return ec;
       }},
      {"release.twice",
       [](Env& env) {
         Client c(env.options());
         return release_twice(env, c);
       }},
      {"release.moved_from",
       [](Env& env) {
         Client c(env.options());
         Lease lease = c.lock("moved").acquire();
         Lease taker = std::move(lease);
         return env.unchanged([&] {
           std::error_code ec;
           lease.release(ec);  // NOLINT(bugprone-use-after-move): the case under test
           return ec;
         });
       }},
      {"release.after_close", releasing([](Client& c) {
         Lease lease = c.lock("closing").acquire();
         c.close();
         return lease;
       })},
      {"release.after_key_deleted", releasing([](Client& c) {
         Lease lease = c.lock("deleted").acquire();
         c.command("DEL", "deleted");
         return lease;
       })},
      {"fence_key.empty", [](Env&) { return code_of([] { fence_key(""); }); }},
      {"fenced_set.key_empty", on_client([](Client& c) { fenced_set(c, "", "v", 1); })},
      {"fenced_hset.wrong_type",
       on_client_after(set_a_string, [](Client& c) { fenced_hset(c, "a-string", "f", "v", 1); })},
      {"fenced_set.after_close", on_closed_client([](Client& c) {
         std::error_code ec;
         fenced_set(c, "k", "v", 1, ec);
         return ec;
       })},
  };
}

std::map<std::string, Check> all_checks() {
  std::map<std::string, Check> all;
  for (auto part : {uri_checks(), client_checks(), lock_checks(), lease_and_fencing_checks(),
                    registered_checks()}) {
    all.merge(part);
  }
  return all;
}

std::string code_name(const std::error_code& ec) {
  if (!ec) return "none";
  static const std::map<int, std::string> names = {
      {static_cast<int>(errc::invalid_argument), "invalid_argument"},
      {static_cast<int>(errc::connection_failed), "connection_failed"},
      {static_cast<int>(errc::connection_lost), "connection_lost"},
      {static_cast<int>(errc::timeout), "timeout"},
      {static_cast<int>(errc::auth_failed), "auth_failed"},
      {static_cast<int>(errc::server_error), "server_error"},
      {static_cast<int>(errc::protocol_error), "protocol_error"},
      {static_cast<int>(errc::not_owner), "not_owner"},
      {static_cast<int>(errc::lease_lost), "lease_lost"},
      {static_cast<int>(errc::closed), "closed"},
      {static_cast<int>(errc::queue_full), "queue_full"},
      {static_cast<int>(errc::cancelled), "cancelled"},
      {static_cast<int>(errc::replication_failed), "replication_failed"},
      {static_cast<int>(errc::not_supported), "not_supported"},
  };
  if (ec.category() != error_category()) return ec.category().name() + (":" + ec.message());
  const auto it = names.find(ec.value());
  return it == names.end() ? "distlock:" + std::to_string(ec.value()) : it->second;
}

TEST(ReliabilityDoc, EveryBadInputRowReturnsItsDocumentedErrorAgainstARealServer) {
  const std::string doc = read_file(kSource / "docs" / "reliability.md");
  const auto rows = table_after(doc, "## Bad input");
  ASSERT_FALSE(rows.empty()) << "no table under '## Bad input'";
  auto checks = all_checks();
  Env env;
  std::set<std::string> documented;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 4u) << "a bad-input row needs 4 columns: " << row.front();
    const std::string id = strip_ticks(row[0]);
    const std::string expected = strip_ticks(row[3]);
    documented.insert(id);
    const auto check = checks.find(id);
    if (check == checks.end()) {
      ADD_FAILURE() << "docs/reliability.md row '" << id << "' has no check in this test";
      continue;
    }
    env.observer.command("FLUSHALL");  // no key left by an earlier row expires mid-row
    env.compared = 0;
    env.changes.clear();
    const std::string got = code_name(check->second(env));
    EXPECT_EQ(got, expected) << "row '" << id << "' (" << row[1] << ", " << row[2] << ")";
    // Only parsing and a default-constructed Lease reach no server.
    const bool reaches_a_server =
        id.rfind("from_uri.", 0) != 0 && id != "fence_key.empty" && id != "release.empty_lease";
    if (reaches_a_server) {
      EXPECT_GT(env.compared, 0) << "row '" << id << "' does not check the server's data";
    }
    for (const auto& change : env.changes) {
      ADD_FAILURE() << "row '" << id << "' changed the server's data:\n" << change;
    }
  }
  for (const auto& [id, check] : checks) {
    EXPECT_TRUE(documented.count(id)) << "check '" << id << "' has no row in docs/reliability.md";
  }
}

}  // namespace
}  // namespace distlock
