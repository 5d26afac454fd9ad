// Redis Cluster key slots: CRC16 (XMODEM) of the key's hash tag, mod 16384.
#pragma once

#include <cstdint>
#include <string_view>

namespace distlock::topology {

constexpr std::uint16_t kSlotCount = 16384;

std::uint16_t crc16(std::string_view data) noexcept;

// The part of `key` Redis Cluster hashes: the content of the first {...}
// when that content is non-empty, otherwise the whole key.
std::string_view hash_tag(std::string_view key) noexcept;

std::uint16_t key_slot(std::string_view key) noexcept;

// Whether the channels of the primitive named `name` share its slot. Every
// channel is named by Redisson's prefixName rule ("<prefix>:{name}", or
// "<prefix>:name" when the name has a '{', sync/key_layout.hpp), plus
// ":<owner>" for a fair waiter's own: they share the slot when the name has
// no brace at all, or has a hash tag of its own ("{tenant}:job"). For the
// rest ("a}b", "x{y", "{}z") the slots differ (or agree by chance only), so
// a script routed by the name cannot SPUBLISH on them: sharded pub/sub
// (ClientOptions::sharded_pubsub) uses classic pub/sub for those names.
bool channels_share_slot(std::string_view name) noexcept;

}  // namespace distlock::topology
