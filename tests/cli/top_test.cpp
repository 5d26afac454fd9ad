// `distlock top` driven in a real terminal: tmux (new-session -d, send-keys,
// capture-pane) on its own server socket.
#include <gtest/gtest.h>
#include <unistd.h>

#include <regex>

#include "cli/cli_support.hpp"

namespace distlock::test {
namespace {

using std::chrono::seconds;

class Top : public ::testing::Test, public CliTest {
 protected:
  void SetUp() override {
    // A missing tool fails the test rather than skipping it: a skip would
    // leave top untested without anyone noticing.
    ASSERT_EQ(run_status({"sh", "-c", "command -v tmux"}), 0)
        << "tmux is not installed (scripts/setup.sh installs it); these tests drive top in it";
  }
  void TearDown() override { run_status({"tmux", "-L", socket_, "kill-server"}); }

  static int run_status(const std::vector<std::string>& argv) {
    try {
      run_capture(argv, seconds(10));
      return 0;
    } catch (const std::exception&) {
      return 1;
    }
  }
  std::string tmux(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"tmux", "-L", socket_};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_capture(argv, seconds(10));
  }
  std::string screen() {
    try {
      return tmux({"capture-pane", "-p", "-t", "top"});
    } catch (const std::exception&) {
      return "";
    }
  }

  RedisServer server_;
  std::string socket_ = "distlock-cli-" + std::to_string(getpid());
};

TEST_F(Top, ShowsALockHeldByAnotherProcessWithItsHolderAndTtlAndQuitsOnQ) {
  ToolRun holder = start({"run", "nightly", "--uri", server_.uri(), "--", "sh", "-c",
                          "touch " + path("held") + "; " + wait_for(path("go"))});
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(20)));
  const std::string owner = server_.cli({"HKEYS", "nightly"});
  const std::string command = std::string(DISTLOCK_TOOL) + " top --uri " + server_.uri() +
                              " --interval 200ms; echo exit=$? > " + path("top.exit");
  tmux({"new-session", "-d", "-s", "top", "-x", "220", "-y", "40", command});
  ASSERT_TRUE(eventually(
      [&] {
        const std::string s = screen();
        return s.find("nightly") != std::string::npos && s.find(owner) != std::string::npos;
      },
      seconds(20)))
      << screen();
  const std::string s = screen();
  EXPECT_NE(s.find("HOLDER"), std::string::npos) << s;
  EXPECT_NE(s.find("TTL"), std::string::npos) << s;
  // The row: name, kind, holder, held for, a TTL in seconds under 30 s.
  const auto row = s.substr(s.find("nightly"));
  EXPECT_NE(row.find("lock"), std::string::npos) << s;
  EXPECT_NE(row.find(">="), std::string::npos) << s;
  // The TTL column: seconds with one decimal, at most the 30 s watchdog lease.
  std::smatch ttl;
  const std::string after_holder = row.substr(row.find(owner) + owner.size());
  ASSERT_TRUE(std::regex_search(after_holder, ttl, std::regex(R"(>=[0-9.]+s +([0-9]+)\.[0-9]s)")))
      << s;
  EXPECT_LE(std::stoi(ttl[1].str()), 30) << s;
  tmux({"send-keys", "-t", "top", "q"});
  ASSERT_TRUE(eventually([&] { return file_exists(path("top.exit")); }, seconds(20)))
      << "top did not quit on q: " << screen();
  EXPECT_EQ(read_file(path("top.exit")), "exit=0\n");
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
}

}  // namespace
}  // namespace distlock::test
