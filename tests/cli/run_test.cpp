// `distlock run`: real distlock processes against a real redis-server.
#include <gtest/gtest.h>
#include <signal.h>

#include <sstream>

#include "cli/cli_support.hpp"
#include "support/refusing_port.hpp"

namespace distlock::test {
namespace {

using std::chrono::seconds;

class Run : public ::testing::Test, public CliTest {
 protected:
  RedisServer server_;
  std::string uri_ = server_.uri();
  std::vector<std::string> run_args(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"run", name, "--uri", uri_};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  static std::vector<std::string> then(std::vector<std::string> args,
                                       const std::vector<std::string>& command) {
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return args;
  }
};

TEST_F(Run, TwoRunsOnTheSameNameNeverOverlapAndTheSecondIsWokenByTheFirstsRelease) {
  // Both leases are 10 min: a second run that missed the release message
  // would retry only when the first's lease had run out, far past the bound
  // below.
  const std::string log = path("log");
  ToolRun first =
      start(then(run_args("job", {"--watchdog", "10m"}), {"sh", "-c", recorded(log, path("go"))}));
  ASSERT_TRUE(eventually([&] { return read_file(log) == "start\n"; }, seconds(20)));
  const long long before = script_calls(server_);
  ToolRun second = start(then(run_args("job", {"--watchdog", "10m"}), {"sh", "-c", recorded(log)}));
  // The second waits: subscribed to the unlock channel, its attempt after
  // subscribing made. From here only the release's message can let it in.
  ASSERT_TRUE(eventually(
      [&] {
        return subscribers(server_, "redisson_lock__channel:{job}") == 1 &&
               script_calls(server_) >= before + 2;
      },
      seconds(20)));
  EXPECT_EQ(read_file(log), "start\n")
      << "the second command started while the first held the lock";
  touch(path("go"));
  EXPECT_EQ(finish(first).status, 0);
  const ToolResult r = finish(second, seconds(30));
  EXPECT_EQ(r.status, 0) << "the second run was not woken by the release: " << r.err;
  // Lines in the order they were written: the second started after the first ended.
  EXPECT_EQ(read_file(log), "start\nend\nstart\nend\n");
}

TEST_F(Run, TheCommandsExitCodePassesThrough) {
  EXPECT_EQ(run(then(run_args("exit7"), {"sh", "-c", "exit 7"})).status, 7);
  EXPECT_EQ(run(then(run_args("exit0"), {"true"})).status, 0);
}

TEST_F(Run, ACommandKilledByASignalExits128PlusTheSignal) {
  EXPECT_EQ(run(then(run_args("killed"), {"sh", "-c", "kill -KILL $$"})).status, 128 + SIGKILL);
}

TEST_F(Run, ACommandThatCannotBeFoundExits127AndReleases) {
  EXPECT_EQ(run(then(run_args("nocmd"), {path("no-such-program")})).status, 127);
  EXPECT_EQ(server_.cli({"EXISTS", "nocmd"}), "0");
}

TEST_F(Run, ACommandThatIsNotExecutableExits126AndReleases) {
  const std::string script = path("not-executable");
  std::ofstream(script) << "#!/bin/sh\ntouch " << path("ran") << "\n";  // created without an x bit
  const ToolResult r = run(then(run_args("noexec"), {script}));
  EXPECT_EQ(r.status, 126) << r.err;
  EXPECT_NE(r.err.find("cannot run"), std::string::npos) << r.err;
  EXPECT_FALSE(file_exists(path("ran")));
  EXPECT_EQ(server_.cli({"EXISTS", "noexec"}), "0");
}

TEST_F(Run, ASignalWhileWaitingForTheLockExits128PlusTheSignalAndLeavesNothingHeld) {
  // Every lease is 10 min: nothing expires while the test runs.
  ToolRun holder = start(then(run_args("busy", {"--watchdog", "10m"}),
                              {"sh", "-c", "touch " + path("held") + "; " + wait_for(path("go"))}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(20)));
  const std::string owner = server_.cli({"HKEYS", "busy"});
  const long long before = script_calls(server_);
  ToolRun termed = start(then(run_args("busy", {"--watchdog", "10m"}), {"touch", path("ran")}));
  ToolRun interrupted =
      start(then(run_args("busy", {"--watchdog", "10m"}), {"touch", path("ran")}));
  // Both wait: subscribed, and each made its attempt after subscribing.
  ASSERT_TRUE(eventually(
      [&] {
        return subscribers(server_, "redisson_lock__channel:{busy}") == 2 &&
               script_calls(server_) >= before + 4;
      },
      seconds(20)));
  termed.process.signal(SIGTERM);
  interrupted.process.signal(SIGINT);
  const ToolResult t = finish(termed, seconds(30));
  const ToolResult i = finish(interrupted, seconds(30));
  EXPECT_EQ(t.status, 128 + SIGTERM) << t.err;
  EXPECT_EQ(i.status, 128 + SIGINT) << i.err;
  EXPECT_FALSE(file_exists(path("ran")));
  // Nothing of theirs is left: no subscription, and the holder alone holds.
  EXPECT_TRUE(eventually([&] { return subscribers(server_, "redisson_lock__channel:{busy}") == 0; },
                         seconds(20)));
  EXPECT_EQ(server_.cli({"HKEYS", "busy"}), owner);
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
  EXPECT_EQ(server_.cli({"EXISTS", "busy"}), "0");
  // Free for the next one at its first attempt.
  EXPECT_EQ(run(then(run_args("busy", {"--wait", "0"}), {"true"})).status, 0);
}

TEST_F(Run, WaitZeroOnAHeldLockExits75WithoutRunningTheCommand) {
  ToolRun holder =
      start(then(run_args("held"),
                 {"sh", "-c", "touch " + path("held") + "; " + recorded(path("h"), path("go"))}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(20)));
  const ToolResult r = run(then(run_args("held", {"--wait", "0"}), {"touch", path("ran")}));
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_FALSE(file_exists(path("ran")));
  EXPECT_NE(r.err.find("not acquired"), std::string::npos) << r.err;
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
}

TEST_F(Run, ConflictExitCodeReplaces75) {
  ToolRun holder =
      start(then(run_args("held"),
                 {"sh", "-c", "touch " + path("held") + "; " + recorded(path("h"), path("go"))}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(20)));
  const ToolResult r = run(
      then(run_args("held", {"--wait", "100ms", "-E", "3", "--quiet"}), {"touch", path("ran")}));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "") << "--quiet prints nothing";
  EXPECT_FALSE(file_exists(path("ran")));
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
}

TEST_F(Run, FencedPassesStrictlyIncreasingTokensToTheCommand) {
  const std::string log = path("tokens");
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(run(then(run_args("fenced", {"--fenced"}),
                       {"sh", "-c", "echo \"$DISTLOCK_FENCING_TOKEN\" >> " + log}))
                  .status,
              0);
  }
  std::istringstream in(read_file(log));
  std::vector<long long> tokens;
  for (std::string line; std::getline(in, line);) tokens.push_back(std::stoll(line));
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_LT(tokens[0], tokens[1]);
  EXPECT_LT(tokens[1], tokens[2]);
}

TEST_F(Run, WithoutFencedTheCommandGetsNoToken) {
  const std::string log = path("token");
  ASSERT_EQ(run(then(run_args("plain"),
                     {"sh", "-c", "echo \"[${DISTLOCK_FENCING_TOKEN-unset}]\" > " + log}))
                .status,
            0);
  EXPECT_EQ(read_file(log), "[unset]\n");
}

TEST_F(Run, AServerPausedPastTheLeaseSendsSigtermToTheCommandAndExits76) {
  const std::string trap = "trap 'echo term > " + path("term") + "; exit 0' TERM; touch " +
                           path("started") + "; while :; do sleep 0.02; done";
  ToolRun r = start(
      then(run_args("paused", {"--watchdog", "1s", "--kill-after", "30s"}), {"sh", "-c", trap}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("started")); }, seconds(20)));
  server_.pause();
  const bool terminated = eventually([&] { return file_exists(path("term")); }, seconds(20));
  server_.resume();
  EXPECT_TRUE(terminated) << "the command never got SIGTERM";
  const ToolResult result = finish(r);
  EXPECT_EQ(result.status, 76) << result.err;
  EXPECT_NE(result.err.find("lease lost"), std::string::npos) << result.err;
}

TEST_F(Run, ACommandIgnoringSigtermIsKilledAfterKillAfter) {
  const std::string stubborn =
      "trap '' TERM; touch " + path("started") + "; while :; do sleep 0.02; done";
  ToolRun r = start(then(run_args("stubborn", {"--lease", "500ms", "--kill-after", "200ms"}),
                         {"sh", "-c", stubborn}));
  const ToolResult result = finish(r);
  EXPECT_TRUE(file_exists(path("started")));
  EXPECT_EQ(result.status, 76) << result.err;
  EXPECT_NE(result.err.find("SIGKILL"), std::string::npos) << result.err;
}

TEST_F(Run, ASignalToDistlockReachesTheCommandAndTheLockIsReleasedOnlyAfterItExits) {
  const std::string body = "trap 'touch " + path("got") + "; " + wait_for(path("go")) +
                           "exit 5' TERM; touch " + path("started") +
                           "; while :; do sleep 0.02; done";
  ToolRun r = start(then(run_args("sig"), {"sh", "-c", body}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("started")); }, seconds(20)));
  r.process.signal(SIGTERM);
  ASSERT_TRUE(eventually([&] { return file_exists(path("got")); }, seconds(20)))
      << "SIGTERM was not forwarded";
  // The command is still running its trap: the lock must still be held.
  EXPECT_EQ(server_.cli({"EXISTS", "sig"}), "1");
  EXPECT_TRUE(r.process.running());
  touch(path("go"));
  EXPECT_EQ(finish(r).status, 5);
  EXPECT_EQ(server_.cli({"EXISTS", "sig"}), "0") << "released after the command exited";
}

TEST_F(Run, UnreachableRedisExits69WithinTheConnectTimeout) {
  RefusingPort refusing;
  const std::string uri =
      "redis://127.0.0.1:" + std::to_string(refusing.port()) + "?connect_timeout_ms=2000";
  const ToolResult r = run({"run", "x", "--uri", uri, "--", "touch", path("ran")}, {}, seconds(30));
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_FALSE(file_exists(path("ran")));
  EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r.err;
}

TEST_F(Run, AServerThatDoesNotAnswerExits69AfterTheConnectTimeout) {
  // A stopped server: the kernel accepts the connection, nothing answers.
  server_.pause();
  const ToolResult r =
      run({"run", "x", "--uri", uri_ + "?connect_timeout_ms=500", "--", "touch", path("ran")}, {},
          seconds(30));
  server_.resume();
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_FALSE(file_exists(path("ran")));
}

TEST_F(Run, TheUriComesFromDistlockUriThenRedisUrl) {
  EXPECT_EQ(run({"run", "env1", "--", "true"},
                {{"DISTLOCK_URI", uri_}, {"REDIS_URL", "redis://127.0.0.1:1"}})
                .status,
            0);
  EXPECT_EQ(run({"run", "env2", "--", "true"}, {{"DISTLOCK_URI", ""}, {"REDIS_URL", uri_}}).status,
            0);
}

TEST_F(Run, AServerRefusingTheCredentialsExits69) {
  RedisServerOptions options;
  options.requirepass = "right";
  RedisServer locked(options);
  const std::string uri = "redis://:wrong@127.0.0.1:" + std::to_string(locked.port());
  const ToolResult r = run({"run", "x", "--uri", uri, "--", "touch", path("ran")});
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_FALSE(file_exists(path("ran")));
}

TEST_F(Run, AnAclUserNotAllowedToRunScriptsExits69) {
  RedisServerOptions options;
  options.acl_users = {"bob on >pw ~* &* +@all -evalsha -eval"};
  RedisServer acl(options);
  const std::string uri = "redis://bob:pw@127.0.0.1:" + std::to_string(acl.port());
  const ToolResult r = run({"run", "x", "--uri", uri, "--", "touch", path("ran")});
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_FALSE(file_exists(path("ran")));
}

TEST_F(Run, BadUsageExits64WithAMessage) {
  const std::vector<std::vector<std::string>> cases{
      {"run", "--uri", uri_, "--", "true"},  // no NAME
      {"run", "x", "--uri", uri_},           // no command
      {"run", "x", "--uri", uri_, "--wait", "5x", "--", "true"},
      {"run", "x", "--uri", uri_, "--lease", "0", "--", "true"},
      {"run", "x", "--uri", uri_, "--bogus", "--", "true"},
      {"run", "x", "--uri", "http://nope", "--", "true"},
      {"sem", "run", "x", "--uri", uri_, "--", "true"},  // no --permits
      {"status", "x", "--uri", uri_, "--", "true"},
      {},
  };
  for (const auto& args : cases) {
    const ToolResult r = run(args);
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    EXPECT_EQ(r.status, 64) << shown;
    EXPECT_FALSE(r.err.empty()) << shown;
  }
}

TEST_F(Run, WithLockDelayAHolderThatVanishesKeepsTheNextRunOutAfterItsLeaseEnds) {
  // The holder's process is SIGKILLed (by its own command) while it holds:
  // nothing releases, so its 1 s lease ends on the server and its 10 min
  // lock-delay starts. The orphaned command then ends by itself.
  const std::string body = "touch " + path("started") + "; kill -KILL $PPID; sleep 2";
  ToolRun first = start(
      then(run_args("delayed", {"--watchdog", "1s", "--lock-delay", "10m"}), {"sh", "-c", body}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("started")); }, seconds(20)));
  (void)finish(first);
  ASSERT_TRUE(eventually(
      [&] {
        return server_.cli({"EXISTS", "delayed"}) == "0";
      },
      seconds(20)))
      << "the dead holder's lease never ended";
  EXPECT_EQ(server_.cli({"EXISTS", "distlock_lock_delay:{delayed}"}), "1");
  const ToolResult r =
      run(then(run_args("delayed", {"--lock-delay", "10m", "--wait", "1s"}), {"true"}));
  EXPECT_EQ(r.status, 75) << "a run with a lock-delay got the lock inside the delay: " << r.err;
}

TEST_F(Run, WithLockDelayACleanReleaseLetsTheNextRunInAtOnce) {
  EXPECT_EQ(run(then(run_args("clean", {"--lock-delay", "10m"}), {"true"})).status, 0);
  EXPECT_EQ(server_.cli({"EXISTS", "distlock_lock_delay:{clean}"}), "0");
  const ToolResult r =
      run(then(run_args("clean", {"--lock-delay", "10m", "--wait", "0"}), {"true"}));
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(Run, ABadLockDelayIsAUsageError) {
  for (const std::string bad : {"-1s", "soon", "25h"}) {
    SCOPED_TRACE(bad);
    const ToolResult r = run(then(run_args("bad-delay", {"--lock-delay", bad}), {"true"}));
    EXPECT_EQ(r.status, 64) << r.err;
    EXPECT_NE(r.err.find("delay"), std::string::npos) << r.err;
  }
  EXPECT_EQ(server_.cli({"EXISTS", "bad-delay"}), "0");
}

}  // namespace
}  // namespace distlock::test
