// The key and channel names every primitive, Redlock and the CLI derive from
// a primitive's name (sync/key_layout.hpp): pinned string by string, since
// Redisson clients and older distlock clients must find the same keys.
#include "sync/key_layout.hpp"

#include <gtest/gtest.h>

#include <string>

#include "topology/slot.hpp"

namespace distlock {
namespace {

using topology::key_slot;

TEST(KeyLayout, APlainNameGetsRedissonsKeysAndChannelsWithTheNameAsHashTag) {
  EXPECT_EQ(sync::fencing_counter_key("job"), "redisson_lock_token:{job}");
  EXPECT_EQ(sync::lock_channel("job"), "redisson_lock__channel:{job}");
  EXPECT_EQ(sync::fair_queue_key("job"), "redisson_lock_queue:{job}");
  EXPECT_EQ(sync::fair_timeout_key("job"), "redisson_lock_timeout:{job}");
  EXPECT_EQ(sync::rw_key_prefix("job"), "{job}");
  EXPECT_EQ(sync::rw_timeout_prefix("job", "c:1"), "{job}:c:1:rwlock_timeout");
  EXPECT_EQ(sync::rw_channel("job"), "redisson_rwlock:{job}");
  EXPECT_EQ(sync::semaphore_holders_key("job"), "distlock_sem_holders:{job}");
  EXPECT_EQ(sync::semaphore_counts_key("job"), "distlock_sem_counts:{job}");
  EXPECT_EQ(sync::semaphore_v1_leases_key("job"), "distlock_semaphore_leases:{job}");
  EXPECT_EQ(sync::semaphore_v1_holders_key("job"), "distlock_semaphore_holders:{job}");
  EXPECT_EQ(sync::semaphore_channel("job"), "redisson_sc:{job}");
  EXPECT_EQ(sync::latch_channel("job"), "redisson_countdownlatch__channel:{job}");
  EXPECT_EQ(sync::simple_lock_channel("job"), "distlock_simple_lock__channel:{job}");
}

TEST(KeyLayout, ANameWithAHashTagOfItsOwnKeepsItInEveryName) {
  const std::string name = "{t}:job";
  EXPECT_EQ(sync::lock_channel(name), "redisson_lock__channel:{t}:job");
  EXPECT_EQ(sync::fair_queue_key(name), "redisson_lock_queue:{t}:job");
  EXPECT_EQ(sync::fair_timeout_key(name), "redisson_lock_timeout:{t}:job");
  EXPECT_EQ(sync::rw_key_prefix(name), "{t}:job");
  EXPECT_EQ(sync::rw_channel(name), "redisson_rwlock:{t}:job");
  EXPECT_EQ(sync::semaphore_holders_key(name), "distlock_sem_holders:{t}:job");
  EXPECT_EQ(sync::semaphore_counts_key(name), "distlock_sem_counts:{t}:job");
  EXPECT_EQ(sync::semaphore_v1_leases_key(name), "distlock_semaphore_leases:{t}:job");
  EXPECT_EQ(sync::semaphore_v1_holders_key(name), "distlock_semaphore_holders:{t}:job");
  EXPECT_EQ(sync::semaphore_channel(name), "redisson_sc:{t}:job");
  EXPECT_EQ(sync::latch_channel(name), "redisson_countdownlatch__channel:{t}:job");
  EXPECT_EQ(sync::simple_lock_channel(name), "distlock_simple_lock__channel:{t}:job");
  // "redisson_lock_token:{{t}:job}" would hash "{t": the name's own tag is reused.
  EXPECT_EQ(sync::fencing_counter_key(name), "redisson_lock_token:{t}:{t}:job");
}

TEST(KeyLayout, ANameWithAnOpenBraceButNoTagIsNotWrappedInBracesByThePrefixRule) {
  const std::string name = "a{b";
  EXPECT_EQ(sync::lock_channel(name), "redisson_lock__channel:a{b");
  EXPECT_EQ(sync::rw_key_prefix(name), "a{b");
  EXPECT_EQ(sync::rw_channel(name), "redisson_rwlock:a{b");
  EXPECT_EQ(sync::semaphore_holders_key(name), "distlock_sem_holders:a{b");
  EXPECT_EQ(sync::semaphore_counts_key(name), "distlock_sem_counts:a{b");
  EXPECT_EQ(sync::semaphore_v1_leases_key(name), "distlock_semaphore_leases:a{b");
  EXPECT_EQ(sync::semaphore_v1_holders_key(name), "distlock_semaphore_holders:a{b");
  EXPECT_EQ(sync::semaphore_channel(name), "redisson_sc:a{b");
  EXPECT_EQ(sync::latch_channel(name), "redisson_countdownlatch__channel:a{b");
  EXPECT_EQ(sync::simple_lock_channel(name), "distlock_simple_lock__channel:a{b");
  // "{a{b}" hashes "a{b", as the name does, so the counter keeps Redisson's form.
  EXPECT_EQ(sync::fencing_counter_key(name), "redisson_lock_token:{a{b}");
}

TEST(KeyLayout, AFairLockWhosePrefixedKeysWouldLeaveTheNamesSlotPutsThemBesideTheCounter) {
  // "redisson_lock_queue:a{b" hashes whole, into another slot than "a{b".
  EXPECT_EQ(sync::fair_queue_key("a{b"), "redisson_lock_queue:redisson_lock_token:{a{b}");
  EXPECT_EQ(sync::fair_timeout_key("a{b"), "redisson_lock_timeout:redisson_lock_token:{a{b}");
  // "x}{y" hashes whole; "{x}{y}" would hash "x": a number with its slot is the tag.
  EXPECT_EQ(sync::fencing_counter_key("x}{y"), "redisson_lock_token:{42290}:x}{y");
  EXPECT_EQ(sync::fair_queue_key("x}{y"), "redisson_lock_queue:redisson_lock_token:{42290}:x}{y");
  EXPECT_EQ(sync::fair_timeout_key("x}{y"),
            "redisson_lock_timeout:redisson_lock_token:{42290}:x}{y");
  EXPECT_EQ(sync::fencing_counter_key("a}b"), "redisson_lock_token:{20658}:a}b");
  EXPECT_EQ(sync::fair_queue_key("a}b"), "redisson_lock_queue:redisson_lock_token:{20658}:a}b");
}

TEST(KeyLayout, TheCounterAndTheFairKeysShareTheNamesSlotForAnyName) {
  for (const char* name : {"job", "{t}:job", "a}b", "a{b", "x}{y", "{}x", "x{}", "{a}}", "}{",
                           "{{x}}", "z{y}w{v}", "}", "{", "redisson"}) {
    const auto slot = key_slot(name);
    EXPECT_EQ(key_slot(sync::fencing_counter_key(name)), slot) << name;
    EXPECT_EQ(key_slot(sync::fair_queue_key(name)), slot) << name;
    EXPECT_EQ(key_slot(sync::fair_timeout_key(name)), slot) << name;
    EXPECT_EQ(key_slot(sync::lock_delay_key(name)), slot) << name;
  }
  EXPECT_EQ(sync::lock_delay_key("job"), "distlock_lock_delay:{job}");
}

TEST(KeyLayout, TheKeysBesideAPrimitivesOwnKeyAreAuxiliary) {
  for (const std::string& key :
       {sync::fencing_counter_key("x}{y"), sync::fair_queue_key("a{b"), sync::fair_timeout_key("j"),
        sync::semaphore_holders_key("s"), sync::semaphore_counts_key("s"),
        sync::semaphore_v1_leases_key("s"), sync::semaphore_v1_holders_key("s"),
        sync::rw_timeout_prefix("rw", "c:1") + ":1", sync::lock_delay_key("job")}) {
    EXPECT_TRUE(sync::is_auxiliary_key(key)) << key;
  }
  for (const char* key : {"job", "a{b", "redisson_lock_queue", "{rw}:c:1", "t:sem"}) {
    EXPECT_FALSE(sync::is_auxiliary_key(key)) << key;
  }
}

// Sharded pub/sub publishes with SPUBLISH from scripts routed by the name
// only when topology::channels_share_slot(name) says every channel shares
// the name's slot (the server refuses a script's SPUBLISH to another slot).
// Checked here against every channel the layout derives, for names of each
// shape: plain, with a hash tag of their own, and the brace cases where the
// prefixName rule moves the channel to another slot.
TEST(KeyLayout, ChannelsShareTheNamesSlotExactlyWhenChannelsShareSlotSaysSo) {
  const std::string names[] = {"job",   "orders:42", "{tenant}:job", "a}{t}x", "a}b",
                               "}lead", "x{y",       "{}z",          "{}z{t}", "x{}"};
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::uint16_t slot = topology::key_slot(name);
    const std::string channels[] = {
        sync::lock_channel(name),  sync::lock_channel(name) + ":owner-1",
        sync::rw_channel(name),    sync::semaphore_channel(name),
        sync::latch_channel(name), sync::simple_lock_channel(name)};
    bool all_share = true;
    for (const std::string& channel : channels) {
      all_share = all_share && topology::key_slot(channel) == slot;
    }
    EXPECT_EQ(topology::channels_share_slot(name), all_share);
  }
  EXPECT_TRUE(topology::channels_share_slot("job"));
  EXPECT_TRUE(topology::channels_share_slot("{tenant}:job"));
  EXPECT_FALSE(topology::channels_share_slot("a}b"));
  EXPECT_FALSE(topology::channels_share_slot("x{y"));
}

}  // namespace
}  // namespace distlock
