// `distlock status`, `list` and `force-unlock` against locks held by other
// processes (distlock run) and by this test's own Client.
#include <gtest/gtest.h>

#include <set>

#include <sstream>

#include "cli/cli_support.hpp"
#include "cli/json.hpp"
#include "distlock/distlock.hpp"

namespace distlock::test {
namespace {

using std::chrono::seconds;

class Inspect : public ::testing::Test, public CliTest {
 protected:
  RedisServer server_;
  std::string uri_ = server_.uri();

  // A `distlock run` holding `name` until path("go") exists.
  ToolRun hold(const std::string& name, std::vector<std::string> extra = {}) {
    const std::string ready = path(name + ".held");
    std::vector<std::string> args{"run", name, "--uri", uri_};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "sh", "-c", "touch " + ready + "; " + wait_for(path("go"))});
    ToolRun r = start(args);
    EXPECT_TRUE(eventually([&] { return file_exists(ready); }, seconds(20)));
    return r;
  }
  Json json_of(const std::vector<std::string>& args) {
    const ToolResult r = run(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return JsonParser::parse(r.out);
  }
  long long count_stat(const std::string& command) {
    const std::string stats = server_.cli({"INFO", "commandstats"});
    const std::string field = "cmdstat_" + command + ":calls=";
    const auto at = stats.find(field);
    return at == std::string::npos ? 0 : std::stoll(stats.substr(at + field.size()));
  }
};

TEST_F(Inspect, StatusJsonShowsTheHolderAndTtlOfALockHeldByAnotherProcess) {
  ToolRun holder = hold("job", {"--fenced"});
  const Json s = json_of({"status", "job", "--uri", uri_, "--json"});
  EXPECT_EQ(s["name"].string, "job");
  EXPECT_EQ(s["kind"].string, "lock");
  EXPECT_TRUE(s["locked"].boolean);
  ASSERT_EQ(s["holders"].array.size(), 1u);
  EXPECT_EQ(s["holders"].array[0]["id"].string, server_.cli({"HKEYS", "job"}));
  EXPECT_EQ(s["holders"].array[0]["count"].number, 1);
  EXPECT_GT(s["ttl_ms"].number, 0);
  EXPECT_LE(s["ttl_ms"].number, 30'000);
  EXPECT_EQ(s["fencing_counter"].number, 1);
  EXPECT_TRUE(s["held_for_ms"].is_null()) << "the server does not know it";
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
}

TEST_F(Inspect, StatusTextNamesTheHolder) {
  ToolRun holder = hold("job");
  const ToolResult r = run({"status", "job", "--uri", uri_});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("job: lock"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(server_.cli({"HKEYS", "job"})), std::string::npos) << r.out;
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
}

TEST_F(Inspect, StatusOfAFreeNameSaysNotHeld) {
  const Json s = json_of({"status", "free", "--uri", uri_, "--json"});
  EXPECT_EQ(s["kind"].string, "none");
  EXPECT_FALSE(s["locked"].boolean);
  EXPECT_TRUE(s["ttl_ms"].is_null());
}

TEST_F(Inspect, StatusOfAFairLockListsItsQueue) {
  ToolRun holder = hold("fair", {"--fair"});
  ToolRun waiter = start({"run", "fair", "--fair", "--uri", uri_, "--", "true"});
  ASSERT_TRUE(eventually(
      [&] {
        return server_.cli({"LLEN", "redisson_lock_queue:{fair}"}) == "1";
      },
      seconds(20)));
  const Json s = json_of({"status", "fair", "--uri", uri_, "--json"});
  EXPECT_EQ(s["kind"].string, "fair_lock");
  EXPECT_EQ(s["holders"].array.size(), 1u);
  ASSERT_EQ(s["queue"].array.size(), 1u);
  EXPECT_EQ(s["queue"].array[0].string, server_.cli({"LINDEX", "redisson_lock_queue:{fair}", "0"}));
  EXPECT_EQ(s["waiters"].number, 1);
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
  EXPECT_EQ(finish(waiter).status, 0);
}

// A name whose Redisson-style keys would fall in another cluster slot: the
// library keeps the fair queue and the fencing counter beside the counter's
// own tag ("redisson_lock_token:{a{b}"), and status reads them there.
TEST_F(Inspect, StatusFindsTheQueueAndFencingCounterOfAFairLockNamedWithABrace) {
  ToolRun holder = hold("a{b", {"--fair", "--fenced"});
  ToolRun waiter = start({"run", "a{b", "--fair", "--fenced", "--uri", uri_, "--", "true"});
  const std::string queue = "redisson_lock_queue:redisson_lock_token:{a{b}";
  ASSERT_TRUE(eventually([&] { return server_.cli({"LLEN", queue}) == "1"; }, seconds(20)));
  const Json s = json_of({"status", "a{b", "--uri", uri_, "--json"});
  EXPECT_EQ(s["kind"].string, "fair_lock");
  ASSERT_EQ(s["queue"].array.size(), 1u);
  EXPECT_EQ(s["queue"].array[0].string, server_.cli({"LINDEX", queue, "0"}));
  EXPECT_EQ(s["waiters"].number, 1);
  EXPECT_EQ(s["fencing_counter"].number, 1) << "the counter is redisson_lock_token:{a{b}";
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
  EXPECT_EQ(finish(waiter).status, 0);
}

TEST_F(Inspect, ListShowsAFencedFairLockNamedWithBracesOnceWithItsQueueAndCounter) {
  ToolRun holder = hold("x}{y", {"--fair", "--fenced"});
  ToolRun waiter = start({"run", "x}{y", "--fair", "--fenced", "--uri", uri_, "--", "true"});
  const std::string queue = "redisson_lock_queue:redisson_lock_token:{42290}:x}{y";
  ASSERT_TRUE(eventually([&] { return server_.cli({"LLEN", queue}) == "1"; }, seconds(20)));
  const Json list = json_of({"list", "--uri", uri_, "--json"});
  ASSERT_EQ(list.array.size(), 1u) << "the queue, timeout and counter keys are not listed";
  const Json& e = list.array[0];
  EXPECT_EQ(e["name"].string, "x}{y");
  EXPECT_EQ(e["kind"].string, "fair_lock");
  EXPECT_EQ(e["queue"].array.size(), 1u);
  EXPECT_EQ(e["fencing_counter"].number, 1) << "the counter is redisson_lock_token:{42290}:x}{y";
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
  EXPECT_EQ(finish(waiter).status, 0);
}

TEST_F(Inspect, StatusOfAReadWriteLockShowsItsReaders) {
  Client client(options_for(server_));
  ReadWriteLock rw = client.read_write_lock("rw");
  rw.lock_shared();
  const Json s = json_of({"status", "rw", "--uri", uri_, "--json"});
  EXPECT_EQ(s["kind"].string, "read_write_lock");
  EXPECT_EQ(s["mode"].string, "read");
  ASSERT_EQ(s["holders"].array.size(), 1u);
  EXPECT_EQ(s["holders"].array[0]["role"].string, "read");
  EXPECT_EQ(s["holders"].array[0]["id"].string.rfind(client.id(), 0), 0u);
  rw.unlock_shared();
}

TEST_F(Inspect, ListClassifiesEveryKindAndUsesScanNotKeys) {
  Client client(options_for(server_));
  ToolRun holder = hold("t:lock");
  ReadWriteLock rw = client.read_write_lock("t:rw");
  rw.lock();
  ReadWriteLock read = client.read_write_lock("t:read");
  read.lock_shared();  // a read hold also has a timeout key of its own
  SimpleLock simple = client.fenced_simple_lock("t:simple");
  simple.lock();
  Semaphore sem = client.semaphore("t:sem");
  sem.try_set_permits(3);
  sem.acquire(1);
  client.latch("t:latch").try_set_count(2);
  client.rate_limiter("t:rate").try_set_rate(10, std::chrono::seconds(1));
  server_.cli({"SET", "other", "not a primitive"});
  server_.cli({"CONFIG", "RESETSTAT"});
  const Json list = json_of({"list", "--uri", uri_, "--json"});
  std::map<std::string, std::string> kinds;
  for (const Json& e : list.array) kinds[e["name"].string] = e["kind"].string;
  const std::map<std::string, std::string> expected{
      {"t:lock", "lock"},          {"t:rw", "read_write_lock"}, {"t:read", "read_write_lock"},
      {"t:simple", "simple_lock"}, {"t:sem", "semaphore"},      {"t:latch", "semaphore_or_latch"},
      {"t:rate", "rate_limiter"}};
  EXPECT_EQ(kinds, expected) << "auxiliary keys (fencing counters, holder sets) and foreign keys "
                                "are not listed";
  EXPECT_GT(count_stat("scan"), 0);
  EXPECT_EQ(count_stat("keys"), 0);
  rw.unlock();
  read.unlock_shared();
  simple.unlock();
  sem.release(1);
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
}

TEST_F(Inspect, ListShowsOnlyNamesMatchingThePattern) {
  Client client(options_for(server_));
  client.latch("a:1").try_set_count(1);
  client.latch("b:1").try_set_count(1);
  const Json list = json_of({"list", "a:*", "--uri", uri_, "--json"});
  ASSERT_EQ(list.array.size(), 1u);
  EXPECT_EQ(list.array[0]["name"].string, "a:1");
}

TEST_F(Inspect, ForceUnlockWithoutYesExits64AndKeepsTheLock) {
  ToolRun holder = hold("keep");
  const ToolResult r = run({"force-unlock", "keep", "--uri", uri_});
  EXPECT_EQ(r.status, 64);
  EXPECT_NE(r.err.find("--yes"), std::string::npos) << r.err;
  EXPECT_EQ(server_.cli({"EXISTS", "keep"}), "1");
  touch(path("go"));
  EXPECT_EQ(finish(holder).status, 0);
}

TEST_F(Inspect, ForceUnlockDeletesALockHeldByAnotherProcessWhichThenExits76) {
  ToolRun holder = hold("victim", {"--watchdog", "1s"});
  const Json r = json_of({"force-unlock", "victim", "--yes", "--uri", uri_, "--json"});
  EXPECT_TRUE(r["unlocked"].boolean);
  EXPECT_EQ(r["kind"].string, "lock");
  EXPECT_EQ(server_.cli({"EXISTS", "victim"}), "0");
  // The holder's next renewal finds the lock gone: its command gets SIGTERM.
  const ToolResult h = finish(holder);
  EXPECT_EQ(h.status, 76) << h.err;
}

TEST_F(Inspect, StatusOfASemaphoreListsEachHolderWithItsCountInBothLayouts) {
  Client client(options_for(server_));
  Semaphore sem = client.semaphore("pool");
  ASSERT_TRUE(sem.try_set_permits(6));
  Permit one = sem.acquire_permit(1);  // no field in distlock_sem_counts: holds 1
  Permit two = sem.acquire_permit(2);
  // A holder of the earlier layout (a field for every holder).
  server_.cli({"HSET", "distlock_semaphore_holders:{pool}", "old", "3"});
  server_.cli({"ZADD", "distlock_semaphore_leases:{pool}", "99999999999999", "old"});
  const Json s = json_of({"status", "pool", "--uri", uri_, "--json"});
  EXPECT_EQ(s["kind"].string, "semaphore");
  std::multiset<std::int64_t> counts;
  for (const Json& h : s["holders"].array) counts.insert(h["count"].number);
  EXPECT_EQ(counts, (std::multiset<std::int64_t>{1, 2, 3}));
}

TEST_F(Inspect, ForceUnlockOfAFreeNameSaysItWasNotLocked) {
  const Json r = json_of({"force-unlock", "free", "--yes", "--uri", uri_, "--json"});
  EXPECT_FALSE(r["unlocked"].boolean);
}

TEST_F(Inspect, ForceUnlockRefusesASemaphore) {
  Client client(options_for(server_));
  client.semaphore("s").try_set_permits(1);
  const ToolResult r = run({"force-unlock", "s", "--yes", "--uri", uri_});
  EXPECT_EQ(r.status, 64);
  EXPECT_EQ(server_.cli({"GET", "s"}), "1");
}

}  // namespace
}  // namespace distlock::test
