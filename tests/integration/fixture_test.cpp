// Tests of the test fixture itself: real redis-server processes, child
// process cleanup, and TLS material.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/tls_material.hpp"

namespace distlock::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// True once pid no longer exists or is a zombie, polled for at most bound.
bool gone_within(pid_t pid, milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string field;
    for (int i = 0; i < 3 && stat >> field; ++i) {
    }
    if (field == "Z") return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
}

TEST(Fixture, ServerStartsOnALoopbackPortAndAnswersPingViaCli) {
  RedisServer server;
  EXPECT_TRUE(server.running());
  EXPECT_EQ(server.host(), "127.0.0.1");
  EXPECT_NE(server.port(), 6379) << "must never touch a developer's Redis";
  EXPECT_EQ(server.uri(), "redis://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(server.cli({"PING"}), "PONG");
  EXPECT_TRUE(raw_ping(server.host(), server.port(), seconds(5)));
  EXPECT_EQ(server.cli({"CONFIG", "GET", "save"}), "save\n");
  EXPECT_EQ(server.cli({"CONFIG", "GET", "appendonly"}), "appendonly\nno");
}

TEST(Fixture, RestartKeepsThePortLosesTheDataAndChangesThePid) {
  RedisServer server;
  const auto port = server.port();
  const pid_t old_pid = server.pid();
  ASSERT_EQ(server.cli({"SET", "fixture:restart", "1"}), "OK");
  ASSERT_EQ(server.cli({"GET", "fixture:restart"}), "1");
  server.restart();
  EXPECT_EQ(server.port(), port);
  EXPECT_NE(server.pid(), old_pid);
  EXPECT_EQ(server.cli({"GET", "fixture:restart"}), "") << "nil: no persistence";
}

TEST(Fixture, PausedServerDoesNotAnswerUntilResumed) {
  RedisServer server;
  server.pause();
  EXPECT_TRUE(server.running()) << "a stopped process is still alive";
  EXPECT_FALSE(raw_ping(server.host(), server.port(), milliseconds(300)));
  server.resume();
  EXPECT_TRUE(raw_ping(server.host(), server.port(), seconds(5)));
}

TEST(Fixture, KilledServerStartsAgainOnTheSamePort) {
  RedisServer server;
  const auto port = server.port();
  server.kill();
  EXPECT_FALSE(server.running());
  EXPECT_FALSE(raw_ping(server.host(), port, milliseconds(300)));
  EXPECT_THROW(server.cli({"PING"}), std::runtime_error);
  server.start();
  EXPECT_EQ(server.port(), port);
  EXPECT_EQ(server.cli({"PING"}), "PONG");
  EXPECT_THROW(server.start(), std::logic_error) << "already running";
}

TEST(Fixture, PausedServerStopsAndStartsAgain) {
  RedisServer server;
  server.pause();
  server.stop();
  EXPECT_FALSE(server.running());
  server.start();
  EXPECT_EQ(server.cli({"PING"}), "PONG");
}

TEST(Fixture, RequirepassServerAnswersCliWithThePasswordOnly) {
  RedisServerOptions options;
  options.requirepass = "p@ss word";
  RedisServer server(options);
  EXPECT_EQ(server.cli({"PING"}), "PONG");
  EXPECT_EQ(server.uri(), "redis://:p%40ss%20word@127.0.0.1:" + std::to_string(server.port()));
  const std::string anonymous = run_capture(
      {"redis-cli", "-h", server.host(), "-p", std::to_string(server.port()), "PING"}, seconds(10));
  EXPECT_EQ(anonymous.rfind("NOAUTH", 0), 0U) << anonymous;
  EXPECT_TRUE(raw_ping(server.host(), server.port(), seconds(5))) << "-NOAUTH counts as an answer";
}

TEST(Fixture, AclUserLineCreatesAUserThatCanAuthenticate) {
  RedisServerOptions options;
  options.acl_users = {"alice on >s3cret ~* &* +@all"};
  RedisServer server(options);
  EXPECT_EQ(server.cli_as("alice", "s3cret", {"ACL", "WHOAMI"}), "alice");
  EXPECT_EQ(server.cli({"ACL", "WHOAMI"}), "default");
}

TEST(Fixture, TlsServerAnswersCliPingOverTlsOnly) {
  RedisServerOptions options;
  options.tls = true;
  RedisServer server(options);
  EXPECT_EQ(server.cli({"PING"}), "PONG");
  EXPECT_EQ(server.uri(), "rediss://127.0.0.1:" + std::to_string(server.port()) +
                              "?ca_file=" + tls_material().ca_cert + "&server_name=localhost");
  EXPECT_FALSE(raw_ping(server.host(), server.port(), seconds(2))) << "plaintext must not work";
}

TEST(Fixture, TlsMaterialIsMadeOnceAndTheServerCertificateVerifies) {
  const TlsMaterial& tls = tls_material();
  EXPECT_EQ(&tls, &tls_material());
  for (const auto* path :
       {&tls.ca_cert, &tls.server_cert, &tls.server_key, &tls.client_cert, &tls.client_key}) {
    EXPECT_TRUE(std::filesystem::exists(*path)) << *path;
  }
  EXPECT_NO_THROW(run_capture({"openssl", "verify", "-CAfile", tls.ca_cert, "-purpose", "sslserver",
                               "-verify_ip", "127.0.0.1", tls.server_cert},
                              seconds(10)));
  EXPECT_NO_THROW(run_capture(
      {"openssl", "verify", "-CAfile", tls.ca_cert, "-purpose", "sslclient", tls.client_cert},
      seconds(10)));
}

TEST(Fixture, UnixSocketServerAnswersOnItsSocket) {
  RedisServerOptions options;
  options.unix_socket = true;
  RedisServer server(options);
  EXPECT_EQ(server.unix_socket_path(), server.dir() + "/redis.sock");
  EXPECT_EQ(run_capture({"redis-cli", "-s", server.unix_socket_path(), "PING"}, seconds(10)),
            "PONG\n");
}

TEST(Fixture, ExtraConfigDirectivesAreApplied) {
  RedisServerOptions options;
  options.config = {{"maxmemory", "1mb"}, {"maxmemory-policy", "noeviction"}};
  RedisServer server(options);
  EXPECT_EQ(server.cli({"CONFIG", "GET", "maxmemory"}), "maxmemory\n1048576");
  EXPECT_EQ(server.cli({"CONFIG", "GET", "maxmemory-policy"}), "maxmemory-policy\nnoeviction");
}

TEST(Fixture, BadConfigFailsWithTheServerLogInTheMessage) {
  RedisServerOptions options;
  options.config = {{"no-such-directive", "1"}};
  try {
    RedisServer server(options);
    FAIL() << "started with a bad config";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-directive"), std::string::npos) << e.what();
  }
}

TEST(Fixture, TwoServersGetDifferentPortsAndDirectories) {
  RedisServer a;
  RedisServer b;
  EXPECT_NE(a.port(), b.port());
  EXPECT_NE(a.dir(), b.dir());
  ASSERT_EQ(a.cli({"SET", "fixture:which", "a"}), "OK");
  EXPECT_EQ(b.cli({"GET", "fixture:which"}), "");
}

TEST(Fixture, DestroyedServerLeavesNoProcessAndNoDirectory) {
  pid_t pid = -1;
  std::string dir;
  {
    RedisServer server;
    pid = server.pid();
    dir = server.dir();
    EXPECT_TRUE(std::filesystem::exists(dir + "/redis.conf"));
  }
  EXPECT_TRUE(gone_within(pid, milliseconds(0))) << "stopped and reaped by the destructor";
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(Fixture, ServerStartedOnAShortLivedThreadOutlivesTheThread) {
  std::unique_ptr<RedisServer> server;
  std::thread([&server] { server = std::make_unique<RedisServer>(); }).join();
  // PR_SET_PDEATHSIG is tied to the forking thread; the fixture forks on a
  // thread that lives as long as the process.
  EXPECT_FALSE(gone_within(server->pid(), milliseconds(200)));
  EXPECT_EQ(server->cli({"PING"}), "PONG");
}

TEST(FixtureProcess, RunCaptureReturnsStdoutAndThrowsOnFailureOrTimeout) {
  EXPECT_EQ(run_capture({"sh", "-c", "echo out; echo err >&2"}, seconds(10)), "out\n");
  EXPECT_EQ(run_capture({"sh", "-c", "echo $X"}, seconds(10), {{"X", "from env"}}), "from env\n");
  try {
    run_capture({"sh", "-c", "echo why >&2; exit 3"}, seconds(10));
    FAIL() << "a failing command must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("why"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_capture({"sleep", "30"}, milliseconds(200)), std::runtime_error);
  EXPECT_THROW(run_capture({"distlock-no-such-program"}, seconds(10)), std::runtime_error);
}

TEST(FixtureProcess, WaitForExitTimesOutThenKillAndReapEndsTheChild) {
  ChildProcess child = ChildProcess::spawn({"sleep", "30"});
  EXPECT_TRUE(child.running());
  EXPECT_EQ(child.wait_for_exit(milliseconds(50)), std::nullopt);
  const int status = child.kill_and_reap();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << describe_wait_status(status);
  EXPECT_FALSE(child.running());
  EXPECT_EQ(child.wait_for_exit(milliseconds(0)), status);
}

// Starts a server and a plain child in a death-test child process that then
// dies by `sig`, and checks that both are gone afterwards.
void expect_children_die_with_the_binary(int sig) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string record = "/tmp/distlock-fixture-death-" + std::to_string(::getpid());
  EXPECT_EXIT(
      {
        RedisServer server;
        ChildProcess sleeper = ChildProcess::spawn({"sleep", "60"});
        std::ofstream("/tmp/distlock-fixture-death-" + std::to_string(::getppid()))
            << server.pid() << " " << sleeper.pid() << " " << server.port() << " " << server.dir()
            << std::endl;
        ::raise(sig);
      },
      ::testing::KilledBySignal(sig), "");
  pid_t server_pid = -1;
  pid_t sleeper_pid = -1;
  int port = 0;
  std::string dir;
  std::ifstream(record) >> server_pid >> sleeper_pid >> port >> dir;
  std::filesystem::remove(record);
  ASSERT_GT(server_pid, 0);
  EXPECT_TRUE(gone_within(server_pid, seconds(5)));
  EXPECT_TRUE(gone_within(sleeper_pid, seconds(5)));
  EXPECT_FALSE(raw_ping("127.0.0.1", static_cast<std::uint16_t>(port), milliseconds(300)));
  // No destructor ran in the dead process to remove its directory.
  if (dir.rfind("/tmp/distlock-redis-", 0) == 0) std::filesystem::remove_all(dir);
}

TEST(FixtureProcess, ChildrenDieWhenTheTestBinaryAborts) {
  expect_children_die_with_the_binary(SIGABRT);
}

TEST(FixtureProcess, ChildrenDieWhenTheTestBinaryIsKilled) {
  expect_children_die_with_the_binary(SIGKILL);
}

TEST(FixtureProcess, MakeTempDirRemovesDirsOfDeadOwnersOnly) {
  namespace fs = std::filesystem;
  const std::string prefix = "distlock-sweep-" + std::to_string(::getpid()) + "-";
  ChildProcess dead = ChildProcess::spawn({"true"});
  ASSERT_TRUE(dead.wait_for_exit(seconds(10)));
  const std::string stale = "/tmp/" + prefix + "stale";
  const std::string unowned = "/tmp/" + prefix + "unowned";
  fs::create_directory(stale);
  fs::create_directory(unowned);
  std::ofstream(stale + "/owner") << dead.pid() << " 1\n";
  const std::string fresh = make_temp_dir(prefix);
  EXPECT_FALSE(fs::exists(stale)) << "its owner process is gone";
  EXPECT_TRUE(fs::exists(unowned)) << "no owner file: maybe being created";
  EXPECT_TRUE(fs::exists(fresh + "/owner"));
  fs::remove_all(unowned);
  fs::remove_all(fresh);
}

// A gtest "fast" death test fork()s the test binary: the copy must neither
// kill the parent's servers (signal handlers, atexit, static destructors run
// by exit()) nor hang when it starts servers of its own.
TEST(FixtureProcess, FastDeathTestChildrenLeaveTheParentsServersAlone) {
  GTEST_FLAG_SET(death_test_style, "fast");
  static RedisServer shared;  // static: exit() in the copy runs its destructor
  RedisServer local;
  EXPECT_EXIT(std::exit(0), ::testing::ExitedWithCode(0), "");
  EXPECT_DEATH(std::abort(), "");
  EXPECT_EXIT(
      {
        RedisServer own;  // forked here: the copy has no forking thread
        const bool answered = own.cli({"PING"}) == "PONG";
        own.kill();
        std::filesystem::remove_all(own.dir());  // exit() runs no destructor
        std::exit(answered ? 3 : 4);
      },
      ::testing::ExitedWithCode(3), "");
  EXPECT_EQ(shared.cli({"PING"}), "PONG");
  EXPECT_EQ(local.cli({"PING"}), "PONG");
  EXPECT_TRUE(std::filesystem::exists(shared.dir() + "/redis.conf"));
}

TEST(Fixture, StartFailsClearlyWhenThePortWasTakenMeanwhile) {
  RedisServer server;
  server.kill();
  // Someone else listens on the port now.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server.port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  ASSERT_EQ(::listen(fd, 1), 0);
  try {
    server.start();
    ADD_FAILURE() << "started on a taken port";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("Address already in use"), std::string::npos) << e.what();
  }
  ::close(fd);
  EXPECT_FALSE(server.running());
}

}  // namespace
}  // namespace distlock::test
