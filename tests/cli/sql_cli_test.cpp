// The distlock tool on mysql:// and postgresql:// URIs: real distlock
// processes against a real mariadbd and a real postgres; the lock's state is
// checked through the library's own Client on the same server.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "cli/json.hpp"
#include "distlock/distlock.hpp"
#include "support/mariadb_server.hpp"
#include "support/postgres_server.hpp"
#include "support/refusing_port.hpp"

namespace distlock::test {
namespace {

using std::chrono::seconds;

enum class Kind { mariadb, postgresql };

std::string kind_name(const testing::TestParamInfo<Kind>& info) {
  return info.param == Kind::mariadb ? "MariaDb" : "PostgreSql";
}

// One server of either kind, as the tests need it.
class SqlServer {
 public:
  explicit SqlServer(Kind kind) {
    if (kind == Kind::mariadb) {
      mariadb_ = std::make_unique<MariaDbServer>();
    } else {
      postgres_ = std::make_unique<PostgresServer>();
    }
  }
  std::string uri() const { return mariadb_ ? mariadb_->uri() : postgres_->uri(); }
  ClientOptions options() const { return mariadb_ ? mariadb_->options() : postgres_->options(); }
  std::uint16_t port() const { return mariadb_ ? mariadb_->port() : postgres_->port(); }
  std::string scheme() const { return mariadb_ ? "mysql" : "postgresql"; }
  std::string user() const { return mariadb_ ? MariaDbServer::kUser : PostgresServer::kUser; }
  std::string database() const {
    return mariadb_ ? MariaDbServer::kDatabase : PostgresServer::kDatabase;
  }
  // The name in the tool's messages and the "backend" of its JSON.
  std::string backend_name() const { return mariadb_ ? "MySQL/MariaDB" : "PostgreSQL"; }
  std::string backend_json() const { return scheme(); }

 private:
  std::unique_ptr<MariaDbServer> mariadb_;
  std::unique_ptr<PostgresServer> postgres_;
};

class SqlCli : public ::testing::TestWithParam<Kind>, public CliTest {
 protected:
  SqlServer server_{GetParam()};
  std::string uri_ = server_.uri();
  // The library's own view of the server, to check the tool against.
  Client observer_{server_.options()};

  std::vector<std::string> run_args(const std::string& name,
                                    std::vector<std::string> extra,
                                    const std::vector<std::string>& command) {
    std::vector<std::string> args{"run", name, "--uri", uri_};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return args;
  }
  // A shell command that touches `ready` and runs until path("go") exists.
  std::string held_until_go(const std::string& ready) const {
    return "touch " + ready + "; " + wait_for(path("go"));
  }
  // A shell command that touches path("started"), then runs until SIGTERM,
  // which it records in path("term") before exiting 0.
  std::string until_sigterm() const {
    return "trap 'echo term > " + path("term") + "; exit 0' TERM; touch " + path("started") +
           "; while :; do sleep 0.02; done";
  }
  bool held(const std::string& name) { return observer_.lock(name).is_locked(); }
  Json json_of(const std::vector<std::string>& args) {
    const ToolResult r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return JsonParser::parse(r.out);
  }
};

TEST_P(SqlCli, RunHoldsTheLockWhileTheCommandRunsExportsAFencingTokenAndExitsWithItsStatus) {
  const std::string token_file = path("token");
  ToolRun r = start(run_args(
      "job", {"--fenced"},
      {"sh", "-c",
       "echo \"$DISTLOCK_FENCING_TOKEN\" > " + token_file + "; " + held_until_go(path("held"))}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(30)));
  EXPECT_TRUE(held("job")) << "the server holds the lock while the command runs";
  const std::string first = read_file(token_file);
  touch(path("go"));
  const ToolResult done = finish(r);
  EXPECT_EQ(done.status, 0) << done.err;
  EXPECT_FALSE(held("job")) << "released after the command exited";
  ASSERT_FALSE(first.empty() || first == "\n") << "no DISTLOCK_FENCING_TOKEN";
  // The next holder's token is greater (the counter row of the lock).
  const ToolResult second = run(run_args(
      "job", {"--fenced"}, {"sh", "-c", "echo \"$DISTLOCK_FENCING_TOKEN\" > " + token_file}));
  EXPECT_EQ(second.status, 0) << second.err;
  EXPECT_GT(std::stoll(read_file(token_file)), std::stoll(first));
  // $DISTLOCK_URI instead of --uri; the command's own status passes through.
  const ToolResult seven =
      run({"run", "job", "--wait", "0", "--", "sh", "-c", "exit 7"}, {{"DISTLOCK_URI", uri_}});
  EXPECT_EQ(seven.status, 7) << seven.err;
  EXPECT_FALSE(held("job"));
}

TEST_P(SqlCli, ASecondRunWithWaitZeroExits75WithoutRunningItsCommandWhileTheFirstHolds) {
  ToolRun first = start(run_args("busy", {}, {"sh", "-c", held_until_go(path("held"))}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(30)));
  const ToolResult r = run(run_args("busy", {"--wait", "0"}, {"touch", path("ran")}));
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_NE(r.err.find("not acquired"), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(path("ran")));
  // -E replaces 75, as on Redis and ZooKeeper.
  EXPECT_EQ(run(run_args("busy", {"--wait", "0", "-E", "3"}, {"true"})).status, 3);
  EXPECT_TRUE(held("busy")) << "the first run still holds it";
  touch(path("go"));
  EXPECT_EQ(finish(first).status, 0);
}

TEST_P(SqlCli, StatusSaysWhetherTheServerHoldsTheLockAndNoHolderItCannotKnow) {
  const Json free = json_of({"status", "job", "--uri", uri_, "--json"});
  EXPECT_EQ(free["name"].string, "job");
  EXPECT_EQ(free["kind"].string, "none");
  EXPECT_FALSE(free["locked"].boolean);
  EXPECT_EQ(free["backend"].string, server_.backend_json());
  EXPECT_EQ(free.object.count("holders"), 0u) << "the server does not say who holds it";
  const ToolResult free_text = run({"status", "job", "--uri", uri_});
  EXPECT_EQ(free_text.status, 0) << free_text.err;
  EXPECT_EQ(free_text.out.rfind("job: not held\n  backend:  " + server_.backend_name(), 0), 0u)
      << free_text.out;

  Lease lease = observer_.lock("job").acquire();
  const Json s = json_of({"status", "job", "--uri", uri_, "--json"});
  EXPECT_EQ(s["kind"].string, "lock");
  EXPECT_TRUE(s["locked"].boolean);
  EXPECT_EQ(s["backend"].string, server_.backend_json());
  const ToolResult text = run({"status", "job", "--uri", uri_});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out.rfind("job: held\n", 0), 0u) << text.out;

  lease.release();
  EXPECT_FALSE(json_of({"status", "job", "--uri", uri_, "--json"})["locked"].boolean);
}

TEST_P(SqlCli, ForceUnlockEndsTheHoldersSessionAndItsRunGetsSigtermAndExits76) {
  ToolRun r = start(run_args("taken", {"--kill-after", "30s"}, {"sh", "-c", until_sigterm()}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("started")); }, seconds(30)));
  const ToolResult unlocked = run({"force-unlock", "taken", "--yes", "--uri", uri_});
  EXPECT_EQ(unlocked.status, 0) << unlocked.err;
  EXPECT_EQ(unlocked.out, "taken: unlocked\n");
  EXPECT_TRUE(eventually([&] { return file_exists(path("term")); }, seconds(30)))
      << "the command never got SIGTERM";
  const ToolResult result = finish(r);
  EXPECT_EQ(result.status, 76) << result.err;
  EXPECT_NE(result.err.find("lease lost"), std::string::npos) << result.err;
  EXPECT_FALSE(held("taken"));
  EXPECT_EQ(run({"force-unlock", "taken", "--yes", "--uri", uri_}).out, "taken: was not locked\n");
}

TEST_P(SqlCli, WhatTheseBackendsLackIsRefusedWith64BeforeAnyIo) {
  // Nothing listens on this port and the connect timeout is long: a command
  // that tried to connect would exit 69, and only after 20 s.
  RefusingPort refusing;
  const std::string uri = server_.scheme() + "://" + server_.user() +
                          ":pw@127.0.0.1:" + std::to_string(refusing.port()) + "/" +
                          server_.database() + "?connect_timeout_ms=20000";
  const std::vector<std::vector<std::string>> cases{
      {"run", "x", "--uri", uri, "--fair", "--", "touch", path("ran")},
      {"run", "x", "--uri", uri, "--lease", "10s", "--", "touch", path("ran")},
      {"run", "x", "--uri", uri, "--lock-delay", "5s", "--", "touch", path("ran")},
      {"run", "x", "--uri", uri, "--watchdog", "10s", "--", "touch", path("ran")},
      {"sem", "run", "x", "--permits", "2", "--uri", uri, "--", "touch", path("ran")},
      {"top", "--uri", uri},
      {"list", "--uri", uri},
      {"list", "--uri", uri, "--json"},
  };
  const std::string refused = "not supported by the " + server_.backend_name() + " backend";
  for (const auto& args : cases) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    const auto started = std::chrono::steady_clock::now();
    const ToolResult r = run(args, {}, seconds(40));
    EXPECT_EQ(r.status, 64) << shown << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(10)) << shown;
    EXPECT_NE(r.err.find(refused), std::string::npos) << shown << r.err;
  }
  // A Redlock node must be a Redis master.
  const ToolResult redlock = run({"run", "x", "--redlock", uri, "--", "touch", path("ran")});
  EXPECT_EQ(redlock.status, 64) << redlock.err;
  EXPECT_NE(redlock.err.find("not a Redis URI"), std::string::npos) << redlock.err;
  EXPECT_FALSE(file_exists(path("ran")));
}

TEST_P(SqlCli, AWrongPasswordExits69AndNeverShowsThePassword) {
  const std::string wrong = "Wr0ng-pw-7f3a";
  const std::string uri = server_.scheme() + "://" + server_.user() + ":" + wrong +
                          "@127.0.0.1:" + std::to_string(server_.port()) + "/" + server_.database();
  const std::vector<std::vector<std::string>> cases{
      {"run", "x", "--uri", uri, "--", "touch", path("ran")},
      {"run", "x", "--uri", uri, "--wait", "0", "--", "touch", path("ran")},
      {"status", "x", "--uri", uri},
      {"force-unlock", "x", "--yes", "--uri", uri},
  };
  for (const auto& args : cases) {
    const ToolResult r = run(args, {}, seconds(30));
    EXPECT_EQ(r.status, 69) << args[0] << ": " << r.err;
    EXPECT_FALSE(r.err.empty()) << args[0] << ": says why";
    EXPECT_EQ(r.err.find(wrong), std::string::npos) << "shows the password: " << r.err;
    EXPECT_EQ(r.out.find(wrong), std::string::npos) << r.out;
  }
  EXPECT_FALSE(file_exists(path("ran")));
}

INSTANTIATE_TEST_SUITE_P(Servers,
                         SqlCli,
                         ::testing::Values(Kind::mariadb, Kind::postgresql),
                         kind_name);

}  // namespace
}  // namespace distlock::test
