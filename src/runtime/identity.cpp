#include "runtime/identity.hpp"

#include <openssl/rand.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <stdexcept>

namespace distlock::runtime {
namespace {

std::array<unsigned char, 16> random_bytes() {
  std::array<unsigned char, 16> b{};
  if (RAND_bytes(b.data(), static_cast<int>(b.size())) != 1) {
    throw std::runtime_error("distlock: the OpenSSL CSPRNG failed to produce random bytes");
  }
  return b;
}

void append_hex(std::string& out, unsigned char byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back(kHex[byte >> 4]);
  out.push_back(kHex[byte & 0xf]);
}

}  // namespace

std::string random_uuid() {
  auto b = random_bytes();
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    append_hex(out, b[i]);
  }
  return out;
}

std::string random_token() {
  std::string out;
  out.reserve(32);
  for (unsigned char byte : random_bytes()) append_hex(out, byte);
  return out;
}

std::string thread_owner(const std::string& client_id) {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t number = next.fetch_add(1);
  return client_id + ":" + std::to_string(number);
}

}  // namespace distlock::runtime
