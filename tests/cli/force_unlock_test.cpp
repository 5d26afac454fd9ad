// `distlock force-unlock` of a fair lock and of a read-write lock: the
// primitive's own force-unlock wakes the waiter of that kind, which then
// takes the lock at once.
#include <gtest/gtest.h>

#include <future>
#include <sstream>

#include "cli/cli_support.hpp"
#include "cli/json.hpp"
#include "distlock/distlock.hpp"

namespace distlock::test {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

class ForceUnlock : public ::testing::Test, public CliTest {
 protected:
  RedisServer server_;
  std::string uri_ = server_.uri();
  // Every lease and waiter's place lasts 10 min: nothing expires during a
  // test, and a waiter that no message woke retries only at the holder's
  // TTL, far past the bounds below.
  Client holder_{options_for(server_, minutes(10))};
  Client other_{options_for(server_, minutes(10))};

  Json force_unlock(const std::string& name) {
    const ToolResult r = run({"force-unlock", name, "--yes", "--uri", uri_, "--json"});
    EXPECT_EQ(r.status, 0) << r.err;
    return JsonParser::parse(r.out);
  }
  // Channels matching `pattern` that someone is subscribed to.
  long long channels(const std::string& pattern) {
    std::istringstream in(server_.cli({"PUBSUB", "CHANNELS", pattern}));
    long long n = 0;
    for (std::string line; std::getline(in, line);) n += !line.empty();
    return n;
  }
};

TEST_F(ForceUnlock, OfAFairLockGrantsItToItsQueuedWaiterAtOnce) {
  Lease held = holder_.fair_lock("fair").acquire();
  const long long before = script_calls(server_);
  ToolRun waiter = start(
      {"run", "fair", "--fair", "--watchdog", "10m", "--uri", uri_, "--", "touch", path("ran")});
  // Queued, subscribed to its own grant channel, and its attempt after
  // subscribing made: from here only a grant message lets it in.
  ASSERT_TRUE(eventually(
      [&] {
        return server_.cli({"LLEN", "redisson_lock_queue:{fair}"}) == "1" &&
               channels("redisson_lock__channel:{fair}:*") == 1 &&
               script_calls(server_) >= before + 2;
      },
      seconds(20)));
  const Json r = force_unlock("fair");
  EXPECT_TRUE(r["unlocked"].boolean);
  EXPECT_EQ(r["kind"].string, "fair_lock");
  const ToolResult w = finish(waiter, seconds(30));
  EXPECT_EQ(w.status, 0) << "the queued waiter was not granted the lock: " << w.err;
  EXPECT_TRUE(file_exists(path("ran")));
  EXPECT_EQ(server_.cli({"LLEN", "redisson_lock_queue:{fair}"}), "0");
  EXPECT_EQ(server_.cli({"EXISTS", "fair"}), "0") << "the waiter released it after its command";
}

TEST_F(ForceUnlock, OfAReadWriteLockHeldForReadingLetsAWaitingWriterIn) {
  Lease reading = holder_.read_write_lock("rw").read_lock().acquire();
  const long long before = script_calls(server_);
  // The writer's wait outlasts the bound below: a writer nothing woke is still
  // waiting then (its last attempt, at its own deadline, would succeed).
  auto writer = std::async(std::launch::async, [&] {
    return other_.read_write_lock("rw").write_lock().try_acquire_for(seconds(60));
  });
  ASSERT_TRUE(eventually(
      [&] {
        return subscribers(server_, "redisson_rwlock:{rw}") == 1 &&
               script_calls(server_) >= before + 2;
      },
      seconds(20)));
  const Json r = force_unlock("rw");
  EXPECT_TRUE(r["unlocked"].boolean);
  EXPECT_EQ(r["kind"].string, "read_write_lock");
  ASSERT_EQ(writer.wait_for(seconds(30)), std::future_status::ready)
      << "the waiting writer was not woken";
  std::optional<Lease> writing = writer.get();
  ASSERT_TRUE(writing.has_value());
  EXPECT_EQ(server_.cli({"HGET", "rw", "mode"}), "write");
}

TEST_F(ForceUnlock, OfAReadWriteLockHeldForWritingLetsAWaitingReaderIn) {
  Lease writing = holder_.read_write_lock("rw").write_lock().acquire();
  const long long before = script_calls(server_);
  auto reader = std::async(std::launch::async, [&] {
    return other_.read_write_lock("rw").read_lock().try_acquire_for(seconds(60));
  });
  ASSERT_TRUE(eventually(
      [&] {
        return subscribers(server_, "redisson_rwlock:{rw}") == 1 &&
               script_calls(server_) >= before + 2;
      },
      seconds(20)));
  const Json r = force_unlock("rw");
  EXPECT_TRUE(r["unlocked"].boolean);
  EXPECT_EQ(r["kind"].string, "read_write_lock");
  ASSERT_EQ(reader.wait_for(seconds(30)), std::future_status::ready)
      << "the waiting reader was not woken";
  std::optional<Lease> reading = reader.get();
  ASSERT_TRUE(reading.has_value());
  EXPECT_EQ(server_.cli({"HGET", "rw", "mode"}), "read");
}

}  // namespace
}  // namespace distlock::test
