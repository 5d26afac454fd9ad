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

}  // namespace distlock::topology
