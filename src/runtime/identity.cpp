#include "runtime/identity.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/random.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>

namespace distlock::runtime {
namespace {

// The kernel's CSPRNG (getrandom(2), which OpenSSL's own DRBG seeds from):
// no OpenSSL DRBG to set up, which a one-lock process (the CLI) would pay
// for at start. RAND_bytes where getrandom is missing or fails.
void os_random(unsigned char* out, std::size_t size) {
  while (size > 0) {
    const ssize_t got = getrandom(out, size, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    out += got;
    size -= static_cast<std::size_t>(got);
  }
  if (size > 0 && RAND_bytes(out, static_cast<int>(size)) != 1) {
    throw std::runtime_error("distlock: the CSPRNG failed to produce random bytes");
  }
}

std::array<unsigned char, 16> os_random_16() {
  std::array<unsigned char, 16> b{};
  os_random(b.data(), b.size());
  return b;
}

// Why a per-thread generator is as safe as RAND_bytes for tokens.
//
// A token must be unguessable: knowing any number of other tokens (an
// attacker who reads keys on the server sees many) must not help predict
// one. RAND_bytes per token gives that at the price of a DRBG call through
// OpenSSL's provider layers per acquisition; a keystream costs a copy.
//
// Each thread instead reads a ChaCha20 keystream (OpenSSL EVP) under a
// 256-bit key from the kernel CSPRNG (os_random). ChaCha20 is a PRF:
// without the key its output cannot be told from random bytes, so tokens seen give nothing
// about tokens not seen, and 2^128 guesses per token stay the only attack.
// Each key encrypts one buffer (kBuffer bytes, IV 0: a key is never used
// twice, so no nonce repeats); the buffer's first 32 bytes become the next
// key ("fast key erasure"), and every byte handed out is wiped, so the
// state in memory at any moment reveals no token handed out before. Every
// kReseedEvery buffers the key comes from os_random again, so a state
// read from memory stops predicting tokens after that.
//
// Fork: a forked child starts with a copy of the forking thread's state and
// would repeat the parent's next tokens. The state lives in a page marked
// MADV_WIPEONFORK, which the kernel hands the child zeroed ("not seeded"),
// however the child was made (fork, _Fork, clone without CLONE_VM); and a
// pthread_atfork handler bumps a generation that every draw compares, which
// covers fork() where the page cannot be so marked (kernel < 4.14). No
// system call per token (a getpid() check would cost microseconds on a
// paravirtualized host).
//
// Where ChaCha20 is not available (a FIPS-only provider), every token comes
// from os_random.
constexpr std::size_t kKeySize = 32;
constexpr std::size_t kBuffer = 1024 + kKeySize;  // 64 tokens and the next key
constexpr unsigned kReseedEvery = 1024;           // buffers: 65,536 tokens

std::atomic<std::uint64_t> fork_generation{1};

void after_fork_in_child() {
  fork_generation.fetch_add(1, std::memory_order_relaxed);
}

const EVP_CIPHER* chacha20() {
  // Fetched once: an implicit fetch per key would look the provider up each time.
  static EVP_CIPHER* const cipher = [] {
    pthread_atfork(nullptr, nullptr, &after_fork_in_child);
    return EVP_CIPHER_fetch(nullptr, "ChaCha20", nullptr);
  }();
  return cipher;
}

class ThreadGenerator {
 public:
  ThreadGenerator() : cipher_(chacha20()) {
    void* page =
        mmap(nullptr, sizeof(State), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) {
      mapped_ = true;
#ifdef MADV_WIPEONFORK
      // Best effort: where it fails, the fork generation still covers fork().
      madvise(page, sizeof(State), MADV_WIPEONFORK);
#endif
      state_ = new (page) State{};
    } else {
      state_ = new State{};
    }
    if (cipher_) ctx_ = EVP_CIPHER_CTX_new();
  }
  ~ThreadGenerator() {
    EVP_CIPHER_CTX_free(ctx_);
    OPENSSL_cleanse(state_, sizeof(State));
    if (mapped_) {
      munmap(state_, sizeof(State));
    } else {
      delete state_;
    }
  }
  ThreadGenerator(const ThreadGenerator&) = delete;
  ThreadGenerator& operator=(const ThreadGenerator&) = delete;

  std::array<unsigned char, 16> next() {
    if (!ctx_) return os_random_16();
    State& s = *state_;
    const std::uint64_t generation = fork_generation.load(std::memory_order_relaxed);
    if (!s.seeded || s.generation != generation) {
      seed(generation);
    } else if (s.used + 16 > kBuffer) {
      refill();
    }
    std::array<unsigned char, 16> out;
    std::memcpy(out.data(), s.stream + s.used, out.size());
    OPENSSL_cleanse(s.stream + s.used, out.size());
    s.used += out.size();
    return out;
  }

 private:
  // Zeroed by the kernel in a forked child (when wiped_on_fork_).
  struct State {
    std::uint64_t seeded;  // 0: seed before the next draw
    std::uint64_t generation;
    std::size_t used;  // bytes of stream consumed
    unsigned buffers;  // since the last seed
    unsigned char key[kKeySize];
    unsigned char stream[kBuffer];
  };

  void seed(std::uint64_t generation) {
    State& s = *state_;
    os_random(s.key, kKeySize);
    s.buffers = 0;
    s.generation = generation;
    s.seeded = 1;
    refill();
  }

  void refill() {
    State& s = *state_;
    if (++s.buffers > kReseedEvery) return seed(s.generation);
    static constexpr unsigned char kZeroIv[16] = {};
    std::memset(s.stream, 0, kBuffer);
    int len = 0;
    if (EVP_EncryptInit_ex(ctx_, cipher_, nullptr, s.key, kZeroIv) != 1 ||
        EVP_EncryptUpdate(ctx_, s.stream, &len, s.stream, static_cast<int>(kBuffer)) != 1 ||
        len != static_cast<int>(kBuffer)) {
      throw std::runtime_error("distlock: ChaCha20 failed to produce random bytes");
    }
    std::memcpy(s.key, s.stream, kKeySize);  // the next key; this one is gone
    OPENSSL_cleanse(s.stream, kKeySize);
    s.used = kKeySize;
  }

  const EVP_CIPHER* cipher_;
  EVP_CIPHER_CTX* ctx_ = nullptr;
  State* state_ = nullptr;
  bool mapped_ = false;
};

std::array<unsigned char, 16> token_bytes() {
  // A thread's first token comes from os_random: a process that takes one
  // lock (the CLI) does not pay for setting up the cipher.
  thread_local bool first = true;
  if (first) {
    first = false;
    return os_random_16();
  }
  thread_local ThreadGenerator generator;
  return generator.next();
}

void append_hex(std::string& out, unsigned char byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back(kHex[byte >> 4]);
  out.push_back(kHex[byte & 0xf]);
}

}  // namespace

std::string random_uuid() {
  auto b = os_random_16();
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
  for (unsigned char byte : token_bytes()) append_hex(out, byte);
  return out;
}

std::string thread_owner(const std::string& client_id) {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t number = next.fetch_add(1);
  return client_id + ":" + std::to_string(number);
}

}  // namespace distlock::runtime
