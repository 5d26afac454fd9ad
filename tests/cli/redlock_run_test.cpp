// `distlock run --redlock` and `distlock status --redlock`: real distlock
// processes against five independent redis-servers.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "cli/json.hpp"
#include "integration/redlock_masters.hpp"

namespace distlock::test {
namespace {

using std::chrono::seconds;

// Resumes the paused nodes when it goes, also when an assertion failed.
class Resume {
 public:
  explicit Resume(std::vector<RedisServer*> nodes) : nodes_(std::move(nodes)) {}
  ~Resume() {
    for (RedisServer* node : nodes_) node->resume();
  }
  Resume(const Resume&) = delete;
  Resume& operator=(const Resume&) = delete;

 private:
  std::vector<RedisServer*> nodes_;
};

class RedlockRun : public ::testing::Test, public CliTest {
 protected:
  redlock_test::Masters masters_{5};

  std::string node_list() const {
    std::string out;
    for (const std::string& uri : masters_.uris()) out += (out.empty() ? "" : ",") + uri;
    return out;
  }
  std::vector<std::string> run_args(const std::string& name,
                                    std::vector<std::string> extra,
                                    const std::vector<std::string>& command) const {
    std::vector<std::string> args{"run", name, "--redlock", node_list()};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return args;
  }
  // Pauses the first n nodes (SIGSTOP): they accept connections and answer
  // nothing. The guard resumes them.
  Resume pause_first(std::size_t n) {
    std::vector<RedisServer*> paused;
    for (std::size_t i = 0; i < n; ++i) {
      masters_.servers[i]->pause();
      paused.push_back(masters_.servers[i].get());
    }
    return Resume(std::move(paused));
  }
  ToolResult status(const std::string& name, bool json = false) {
    std::vector<std::string> args{"status", name, "--redlock", node_list()};
    if (json) args.push_back("--json");
    return run(args);
  }
  // A command that says it runs, then waits for the file "go".
  std::vector<std::string> held_until_go() const {
    return {"sh", "-c", "touch " + path("held") + "; " + wait_for(path("go"))};
  }
};

TEST_F(RedlockRun, RunsTheCommandOverFiveMastersAndLeavesNoKeyOnAnyNode) {
  ToolRun holder = start(run_args("job", {}, held_until_go()));
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(30)));
  // While the command runs, the lock is held: one token on every node.
  EXPECT_NE(masters_.settled_token("job", 5), "");
  touch(path("go"));
  const ToolResult r = finish(holder);
  EXPECT_EQ(r.status, 0) << r.err;
  // The release returns once a majority confirmed; the others' deletes may
  // land just after. A key left behind would stay for its 30 s lease.
  EXPECT_TRUE(eventually([&] { return masters_.with_key("job") == 0; }, seconds(10)))
      << "a key was left behind after the release";
}

TEST_F(RedlockRun, TheCommandsExitCodePassesThroughAndNoFencingTokenIsPassed) {
  const ToolResult r = run(run_args(
      "exit7", {}, {"sh", "-c", "echo \"token=${DISTLOCK_FENCING_TOKEN-unset}\"; exit 7"}));
  EXPECT_EQ(r.status, 7) << r.err;
  EXPECT_EQ(r.out, "token=unset\n");
}

TEST_F(RedlockRun, RunsTheCommandWithTwoOfFiveNodesPaused) {
  const Resume resume = pause_first(2);
  const ToolResult r = run(run_args("two-down", {}, {"touch", path("ran")}), {}, seconds(120));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(file_exists(path("ran")));
}

TEST_F(RedlockRun, ExitsNotAcquiredWithThreeOfFiveNodesPausedWithoutRunningTheCommand) {
  const Resume resume = pause_first(3);
  const ToolResult r =
      run(run_args("three-down", {"--wait", "2s"}, {"touch", path("ran")}), {}, seconds(120));
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_NE(r.err.find("not acquired"), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(path("ran")));
}

TEST_F(RedlockRun, ALeaseLostWhileTheCommandRunsStopsItAndExits76) {
  // A 1 s watchdog lease, extended every third of it; with three nodes
  // paused no extension reaches a majority and the hold is lost.
  ToolRun holder = start(run_args("lost", {"--watchdog", "1s"}, held_until_go()));
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(30)));
  const Resume resume = pause_first(3);
  const ToolResult r = finish(holder, seconds(120));
  EXPECT_EQ(r.status, 76) << r.err;
  EXPECT_NE(r.err.find("lease lost"), std::string::npos) << r.err;
}

TEST_F(RedlockRun, BadInputExits64WithAMessageAndRunsNothing) {
  const std::string a = masters_.servers[0]->uri();
  const std::string b = masters_.servers[1]->uri();
  // The second URI names the first's server again, with a password.
  const std::string same = "redis://:sekrit@127.0.0.1:" + a.substr(a.rfind(':') + 1);
  const std::vector<std::vector<std::string>> cases{
      {"run", "x", "--redlock", ""},
      {"run", "x", "--redlock", a + ",," + b},
      {"run", "x", "--redlock", a + ",redis://:sekrit@127.0.0.1:99999"},
      {"run", "x", "--redlock", a + "," + same},
      {"run", "x", "--redlock", a + "," + b, "--fenced"},
      {"run", "x", "--redlock", a + "," + b, "--fair"},
      {"run", "x", "--redlock", a + "," + b, "--uri", a},
      {"run", "x", "--redlock", a + "," + b, "--lock-delay", "5s"},
      {"status", "x", "--redlock", a + "," + same},
  };
  for (std::vector<std::string> args : cases) {
    if (args[0] == "run") {
      args.insert(args.end(), {"--", "touch", path("ran")});
    }
    const ToolResult r = run(args);
    std::string shown;
    for (const auto& arg : args) shown += arg + " ";
    EXPECT_EQ(r.status, 64) << shown << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << shown;
    EXPECT_EQ(r.err.find("sekrit"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("sekrit"), std::string::npos) << r.out;
  }
  EXPECT_NE(run(cases[4]).err.find("--fenced cannot be used with --redlock"), std::string::npos);
  EXPECT_NE(run(cases[7]).err.find("--lock-delay cannot be used with --redlock"),
            std::string::npos);
  EXPECT_FALSE(file_exists(path("ran")));
}

TEST_F(RedlockRun, StatusShowsTheHoldOnEveryNodeWhileARunHoldsItAndNothingAfter) {
  ToolRun holder = start(run_args("job", {}, held_until_go()));
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(30)));
  // An acquire returns once a majority answered: wait for the other SETs.
  const std::string token = masters_.settled_token("job", 5);
  ASSERT_NE(token, "");
  const ToolResult text = status("job");
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("held on 5 of 5 nodes (majority 3, 0 unreachable): locked"),
            std::string::npos)
      << text.out;
  const ToolResult json = status("job", true);
  ASSERT_EQ(json.status, 0) << json.err;
  const Json held = JsonParser::parse(json.out);
  EXPECT_EQ(held["held_on"].number, 5);
  EXPECT_EQ(held["majority"].number, 3);
  EXPECT_TRUE(held["locked"].boolean);
  ASSERT_EQ(held["nodes"].array.size(), 5u);
  for (const Json& node : held["nodes"].array) {
    EXPECT_TRUE(node["reachable"].boolean);
    EXPECT_EQ(node["token"].string, token);
    EXPECT_GT(node["ttl_ms"].number, 0);
  }
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
  ASSERT_TRUE(eventually([&] { return masters_.with_key("job") == 0; }, seconds(10)));
  const Json after = JsonParser::parse(status("job", true).out);
  EXPECT_EQ(after["held_on"].number, 0);
  EXPECT_FALSE(after["locked"].boolean);
  EXPECT_EQ(after["state"].string, "not locked");
  EXPECT_NE(status("job").out.find("held on 0 of 5 nodes"), std::string::npos);
}

TEST_F(RedlockRun, StatusReportsPausedNodesAsUnreachableWithoutHanging) {
  const Resume resume = pause_first(2);
  const ToolResult two = status("free");
  EXPECT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.out.find("node 1 127.0.0.1:"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("unreachable"), std::string::npos) << two.out;
  EXPECT_NE(two.out.find("(majority 3, 2 unreachable): not locked"), std::string::npos) << two.out;
  masters_.servers[2]->pause();
  const Resume resume_third({masters_.servers[2].get()});
  // Three silent nodes could hold a majority: it cannot tell (69).
  const ToolResult three = status("free", true);
  EXPECT_EQ(three.status, 69) << three.err;
  const Json j = JsonParser::parse(three.out);
  EXPECT_EQ(j["unreachable"].number, 3);
  EXPECT_EQ(j["state"].string, "unknown");
}

}  // namespace
}  // namespace distlock::test
