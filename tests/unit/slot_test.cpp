// Cluster slot hashing and the lock's key derivation.
#include <gtest/gtest.h>

#include "distlock/error.hpp"
#include "net/backoff.hpp"
#include "sync/lock_keys.hpp"
#include "topology/slot.hpp"

namespace distlock {
namespace {

using namespace std::chrono_literals;
using topology::key_slot;

TEST(Slot, Crc16MatchesTheRedisClusterReferenceValue) {
  // The check value of CRC16/XMODEM, as in the Redis Cluster specification.
  EXPECT_EQ(topology::crc16("123456789"), 0x31C3);
}

TEST(Slot, KnownKeysHashToTheSlotsRedisReports) {
  // CLUSTER KEYSLOT values from a real Redis.
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
}

TEST(Slot, HashTagRulesFollowTheClusterSpecification) {
  EXPECT_EQ(topology::hash_tag("{user}x"), "user");
  EXPECT_EQ(topology::hash_tag("foo{}{bar}"), "foo{}{bar}")
      << "an empty first tag hashes the whole key";
  EXPECT_EQ(topology::hash_tag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(topology::hash_tag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(topology::hash_tag("a}b"), "a}b");
  EXPECT_EQ(topology::hash_tag("a{b"), "a{b");
}

TEST(LockKeys, EveryKeyOfALockSharesItsSlotForAnyName) {
  for (const char* name : {"orders:42", "{tag}rest", "a}b", "a{b", "{}x", "x{}", "{a}}", "}{",
                           "{{x}}", "z{y}w{v}", "}", "{", "redisson"}) {
    const sync::LockKeys keys(name, true);
    EXPECT_EQ(key_slot(keys.fence), key_slot(keys.name)) << name << " -> " << keys.fence;
  }
}

TEST(LockKeys, NamesWithoutBracesUseRedissonsKeyNames) {
  const sync::LockKeys keys("orders:42", true);
  EXPECT_EQ(keys.channel, "redisson_lock__channel:{orders:42}");
  EXPECT_EQ(keys.fence, "redisson_lock_token:{orders:42}");
  EXPECT_TRUE(sync::LockKeys("orders:42", false).fence.empty());
}

TEST(LockKeys, RejectsEmptyAndOversizedNames) {
  EXPECT_THROW(sync::LockKeys("", false), Error);
  EXPECT_THROW(sync::LockKeys(std::string(65537, 'n'), false), Error);
  EXPECT_NO_THROW(sync::LockKeys(std::string(65536, 'n'), false));
}

TEST(Backoff, GrowsExponentiallyWithinHalfToFullOfTheCap) {
  for (unsigned attempt = 0; attempt < 8; ++attempt) {
    const auto cap = std::min<std::int64_t>(2000, 20LL << attempt);
    for (std::uint64_t r : {0ULL, 1ULL, 12345ULL, ~0ULL}) {
      const auto d = net::backoff_delay(20ms, 2000ms, attempt, r).count();
      EXPECT_GE(d, cap / 2) << attempt;
      EXPECT_LE(d, cap) << attempt;
    }
  }
}

TEST(Backoff, NeverExceedsTheMaximumEvenAfterManyAttempts) {
  EXPECT_LE(net::backoff_delay(20ms, 2000ms, 1000, ~0ULL), 2000ms);
  EXPECT_GE(net::backoff_delay(20ms, 2000ms, 1000, 0), 1000ms);
}

}  // namespace
}  // namespace distlock
