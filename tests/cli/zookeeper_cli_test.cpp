// The distlock tool on a zookeeper:// URI: real distlock processes against a
// real one-node ZooKeeper ensemble; the lock nodes are checked on the server
// (ZkInspector), the holders in the test are the library's own Clients.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/cli_support.hpp"
#include "cli/json.hpp"
#include "distlock/distlock.hpp"
#include "support/refusing_port.hpp"
#include "support/tcp_proxy.hpp"
#include "support/zk_inspect.hpp"
#include "support/zookeeper_ensemble.hpp"

namespace distlock::test {
namespace {

using std::chrono::seconds;

ZooKeeperEnsembleOptions one_node() {
  ZooKeeperEnsembleOptions o;
  o.nodes = 1;
  return o;
}

class ZooKeeperCli : public ::testing::Test, public CliTest {
 protected:
  ZooKeeperEnsemble ensemble_{one_node()};
  // Every lock of these tests is under the chroot /cli.
  std::string uri_ = "zookeeper://" + ensemble_.connect_string() + "/cli";
  ZkInspector zk_{ensemble_.connect_string()};

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
  Json json_of(const std::vector<std::string>& args) {
    const ToolResult r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return JsonParser::parse(r.out);
  }
  // The lock nodes of `name` (under /cli) in queue order.
  std::vector<std::string> queue(const std::string& name) { return zk_.queue("/cli/" + name); }
};

TEST_F(ZooKeeperCli, RunHoldsTheLockWhileTheCommandRunsExitsWithItsStatusAndLeavesItFree) {
  const std::string token_file = path("token");
  ToolRun r = start(run_args(
      "job", {"--fenced"},
      {"sh", "-c",
       "echo \"$DISTLOCK_FENCING_TOKEN\" > " + token_file + "; " + held_until_go(path("held"))}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("held")); }, seconds(20)));
  const auto nodes = queue("job");
  ASSERT_EQ(nodes.size(), 1u) << "one lock node while the command runs";
  // The token is the holder's node's czxid.
  EXPECT_EQ(read_file(token_file), std::to_string(*zk_.czxid("/cli/job/" + nodes[0])) + "\n");
  touch(path("go"));
  const ToolResult done = finish(r);
  EXPECT_EQ(done.status, 0) << done.err;
  EXPECT_TRUE(queue("job").empty()) << "released after the command exited";
  // The command's own exit status passes through, and the lock is free again.
  EXPECT_EQ(run(run_args("job", {"--wait", "0"}, {"sh", "-c", "exit 7"})).status, 7);
  EXPECT_TRUE(queue("job").empty());
}

TEST_F(ZooKeeperCli, RunOnALockAnotherClientHoldsExits75AfterWaitWithoutRunningTheCommand) {
  Client holder(uri_);
  Lease lease = holder.lock("busy").acquire();
  const auto started = std::chrono::steady_clock::now();
  const ToolResult r = run(run_args("busy", {"--wait", "1s"}, {"touch", path("ran")}));
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(900));
  EXPECT_FALSE(file_exists(path("ran")));
  EXPECT_NE(r.err.find("not acquired"), std::string::npos) << r.err;
  EXPECT_EQ(queue("busy").size(), 1u) << "the waiter's node left with it";
  EXPECT_TRUE(lease.valid());
  // -E replaces 75, as for Redis.
  EXPECT_EQ(run(run_args("busy", {"--wait", "0", "-E", "3"}, {"true"})).status, 3);
}

TEST_F(ZooKeeperCli, StatusShowsAFreeLockAndAHeldOnesOwnerNodeFencingTokenAndWaiters) {
  const Json free = json_of({"status", "job", "--uri", uri_, "--json"});
  EXPECT_EQ(free["kind"].string, "none");
  EXPECT_FALSE(free["locked"].boolean);
  EXPECT_TRUE(free["holders"].array.empty());
  EXPECT_EQ(free["path"].string, "/cli/job");
  const ToolResult free_text = run({"status", "job", "--uri", uri_});
  EXPECT_EQ(free_text.status, 0) << free_text.err;
  EXPECT_NE(free_text.out.find("job: no lock node in /cli/job (not held)"), std::string::npos)
      << free_text.out;

  Client holder(uri_);
  Lease lease = holder.fenced_lock("job").acquire();
  ToolRun waiter = start(run_args("job", {}, {"touch", path("waiter-ran")}));
  ASSERT_TRUE(eventually([&] { return queue("job").size() == 2; }, seconds(20)));
  const auto nodes = queue("job");
  const std::string owner = *zk_.data("/cli/job/" + nodes[0]);
  const std::int64_t czxid = *zk_.czxid("/cli/job/" + nodes[0]);
  ASSERT_TRUE(lease.fencing_token());
  EXPECT_EQ(static_cast<std::int64_t>(*lease.fencing_token()), czxid);

  const Json s = json_of({"status", "job", "--uri", uri_, "--json"});
  EXPECT_EQ(s["name"].string, "job");
  EXPECT_EQ(s["kind"].string, "lock");
  EXPECT_TRUE(s["locked"].boolean);
  EXPECT_EQ(s["backend"].string, "zookeeper");
  ASSERT_EQ(s["holders"].array.size(), 1u);
  EXPECT_EQ(s["holders"].array[0]["id"].string, owner);
  EXPECT_EQ(s["holders"].array[0]["node"].string, nodes[0]);
  EXPECT_EQ(s["holders"].array[0]["fencing_token"].number, czxid);
  EXPECT_EQ(s["waiters"].number, 1);
  ASSERT_EQ(s["queue"].array.size(), 1u);
  EXPECT_EQ(s["queue"].array[0].string, *zk_.data("/cli/job/" + nodes[1]));

  const ToolResult text = run({"status", "job", "--uri", uri_});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("job: lock\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("  holder:   " + owner + " (node " + nodes[0] + ", fencing token " +
                          std::to_string(czxid) + ")"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("  waiters:  1\n"), std::string::npos) << text.out;

  lease.release();
  EXPECT_EQ(finish(waiter).status, 0);
  EXPECT_TRUE(file_exists(path("waiter-ran")));
  // Both released: the directory stays (an empty container node, until the
  // server's container sweep, 60 s after its start by default) without a
  // lock node: not held.
  ASSERT_TRUE(zk_.exists("/cli/job"));
  const Json after = json_of({"status", "job", "--uri", uri_, "--json"});
  EXPECT_EQ(after["kind"].string, "none");
  EXPECT_FALSE(after["locked"].boolean);
}

TEST_F(ZooKeeperCli, ListShowsTheHeldLocksWithHolderAndWaitersAndNotAFreeOne) {
  Client holder(uri_);
  Lease a = holder.lock("alpha").acquire();
  Lease b = holder.lock("team/beta").acquire();
  holder.lock("free").acquire().release();  // its directory may stay, empty
  ToolRun waiter = start(run_args("alpha", {}, {"true"}));
  ASSERT_TRUE(eventually([&] { return queue("alpha").size() == 2; }, seconds(20)));
  const std::string owner_a = *zk_.data("/cli/alpha/" + queue("alpha").at(0));
  const std::string owner_b = *zk_.data("/cli/team/beta/" + queue("team/beta").at(0));

  const ToolResult r = run({"list", "--uri", uri_});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "alpha\tlock\t" + owner_a + "\t1\nteam/beta\tlock\t" + owner_b + "\t0\n");

  const Json all = json_of({"list", "--uri", uri_, "--json"});
  ASSERT_EQ(all.array.size(), 2u);
  EXPECT_EQ(all.array[0]["name"].string, "alpha");
  EXPECT_EQ(all.array[1]["name"].string, "team/beta");
  EXPECT_EQ(all.array[1]["path"].string, "/cli/team/beta");
  EXPECT_EQ(all.array[1]["waiters"].number, 0);

  // A glob, and a prefix: the names under it.
  EXPECT_EQ(run({"list", "team/*", "--uri", uri_}).out, "team/beta\tlock\t" + owner_b + "\t0\n");
  EXPECT_EQ(run({"list", "team", "--uri", uri_}).out, "team/beta\tlock\t" + owner_b + "\t0\n");
  EXPECT_EQ(run({"list", "al*", "--uri", uri_}).out, "alpha\tlock\t" + owner_a + "\t1\n");
  EXPECT_EQ(run({"list", "nothing/*", "--uri", uri_}).out, "");
  a.release();
  EXPECT_EQ(finish(waiter).status, 0);
}

TEST_F(ZooKeeperCli, ForceUnlockDeletesTheHoldersNodeAndTheRunGetsSigtermAndExits76) {
  const std::string trap = "trap 'echo term > " + path("term") + "; exit 0' TERM; touch " +
                           path("started") + "; while :; do sleep 0.02; done";
  ToolRun r = start(run_args("taken", {"--kill-after", "30s"}, {"sh", "-c", trap}));
  ASSERT_TRUE(eventually([&] { return file_exists(path("started")); }, seconds(20)));
  const ToolResult unlocked = run({"force-unlock", "taken", "--yes", "--uri", uri_});
  EXPECT_EQ(unlocked.status, 0) << unlocked.err;
  EXPECT_EQ(unlocked.out, "taken: unlocked\n");
  EXPECT_TRUE(eventually([&] { return file_exists(path("term")); }, seconds(20)))
      << "the command never got SIGTERM";
  const ToolResult result = finish(r);
  EXPECT_EQ(result.status, 76) << result.err;
  EXPECT_NE(result.err.find("lease lost"), std::string::npos) << result.err;
  EXPECT_TRUE(queue("taken").empty());
  EXPECT_EQ(run({"force-unlock", "taken", "--yes", "--uri", uri_}).out, "taken: was not locked\n");
}

// The decision docs/cli.md explains: for `run` the connection dropping
// (suspended) is a loss. Cut off from the ensemble, the client learns that
// its session expired only once it reaches a server again; the ensemble
// meanwhile expires the session and gives the lock to the next client. The
// command must have been told to stop by then.
TEST_F(ZooKeeperCli, APartitionSendsSigtermBeforeTheEnsembleGivesTheLockToAnotherAndExits76) {
  TcpProxy proxy(ensemble_.client_port(0));
  const std::string cut_off_uri =
      "zookeeper://127.0.0.1:" + std::to_string(proxy.port()) + "/cli?session_timeout_ms=2000";
  const std::string trap = "trap 'echo term > " + path("term") + "; exit 0' TERM; touch " +
                           path("started") + "; while :; do sleep 0.02; done";
  ToolRun r =
      start({"run", "cut", "--uri", cut_off_uri, "--kill-after", "30s", "--", "sh", "-c", trap});
  ASSERT_TRUE(eventually([&] { return file_exists(path("started")); }, seconds(20)));
  // Silence both ways: the client calls the connection lost after 2/3 of
  // the session timeout, the ensemble expires the session after all of it.
  proxy.hold();
  Client other(uri_);
  const auto lease = other.lock("cut").try_acquire_for(seconds(20));
  ASSERT_TRUE(lease) << "the ensemble never expired the cut-off session";
  EXPECT_TRUE(file_exists(path("term")))
      << "another client holds the lock and the command was not told to stop";
  // distlock ends while still cut off: the release fails, the node went
  // with the session.
  const ToolResult result = finish(r, seconds(30));
  proxy.resume();
  EXPECT_EQ(result.status, 76) << result.err;
  EXPECT_NE(result.err.find("uncertain"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("lease lost: sending SIGTERM"), std::string::npos) << result.err;
}

TEST_F(ZooKeeperCli, WhatZooKeeperLacksIsRefusedWith64BeforeAnyIo) {
  // Nothing listens on this port and the connect timeout is long: a run
  // that tried to connect would exit 69, and only after 20 s.
  RefusingPort refusing;
  const std::string uri =
      "zookeeper://127.0.0.1:" + std::to_string(refusing.port()) + "?connect_timeout_ms=20000";
  const std::vector<std::vector<std::string>> cases{
      {"run", "x", "--uri", uri, "--lock-delay", "5s", "--", "touch", path("ran")},
      {"run", "x", "--uri", uri, "--fair", "--", "touch", path("ran")},
      {"run", "x", "--uri", uri, "--lease", "10s", "--", "touch", path("ran")},
      {"run", "x", "--uri", uri, "--watchdog", "10s", "--", "touch", path("ran")},
      {"sem", "run", "x", "--permits", "2", "--uri", uri, "--", "touch", path("ran")},
      {"top", "--uri", uri},
      {"run", "x", "--redlock", uri, "--", "touch", path("ran")},
  };
  for (const auto& args : cases) {
    std::string shown;
    for (const auto& a : args) shown += a + " ";
    const auto started = std::chrono::steady_clock::now();
    const ToolResult r = run(args, {}, seconds(40));
    EXPECT_EQ(r.status, 64) << shown << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(10)) << shown;
    EXPECT_TRUE(r.err.find("not supported by the ZooKeeper backend") != std::string::npos ||
                r.err.find("not a Redis URI") != std::string::npos)
        << shown << r.err;
  }
  EXPECT_FALSE(file_exists(path("ran")));
}

TEST_F(ZooKeeperCli, AnUnreachableEnsembleExits69NamingTheServersButNeverThePassword) {
  RefusingPort refusing;
  const std::string server = "127.0.0.1:" + std::to_string(refusing.port());
  const std::string uri = "zookeeper://u:secret@" + server + "/cli?connect_timeout_ms=500";
  const std::vector<std::vector<std::string>> cases{
      {"run", "x", "--uri", uri, "--", "touch", path("ran")},
      {"status", "x", "--uri", uri},
      {"list", "--uri", uri},
      {"force-unlock", "x", "--yes", "--uri", uri},
  };
  for (const auto& args : cases) {
    const ToolResult r = run(args, {}, seconds(30));
    EXPECT_EQ(r.status, 69) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(server), std::string::npos) << "names the server: " << r.err;
    EXPECT_EQ(r.err.find("secret"), std::string::npos) << "shows the password: " << r.err;
    EXPECT_EQ(r.out.find("secret"), std::string::npos) << r.out;
  }
  EXPECT_FALSE(file_exists(path("ran")));
}

TEST_F(ZooKeeperCli, AMalformedZooKeeperUriOrLockNameExits64) {
  const std::string servers = ensemble_.connect_string();
  const std::vector<std::string> bad{
      "zookeeper://" + servers + "/a//b",      // an empty chroot segment
      "zookeeper://" + servers + "/cli?db=1",  // a Redis option
      "zookeeper://127.0.0.1:99999/cli",       // no such port
      "zookeeper://" + servers + "/cli?session_timeout_ms=0",
      "zookeeper://u:secret@" + servers + "/zookeeper",  // the server's own tree
  };
  for (const std::string& uri : bad) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"run", "x", "--uri", uri, "--", "touch", path("ran")},
          std::vector<std::string>{"status", "x", "--uri", uri}}) {
      const ToolResult r = run(args);
      EXPECT_EQ(r.status, 64) << uri << " " << args[0] << ": " << r.err;
      EXPECT_NE(r.err.find("invalid ZooKeeper URI"), std::string::npos) << r.err;
      EXPECT_EQ(r.err.find("secret"), std::string::npos) << r.err;
    }
  }
  // A lock name that is no ZooKeeper path.
  for (const std::string name : {"a//b", "a/../b", "trailing/"}) {
    EXPECT_EQ(run(run_args(name, {}, {"touch", path("ran")})).status, 64) << name;
    EXPECT_EQ(run({"status", name, "--uri", uri_}).status, 64) << name;
  }
  EXPECT_FALSE(file_exists(path("ran")));
}

}  // namespace
}  // namespace distlock::test
