#include "net/completion.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace distlock::net {
namespace {

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value) {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, nullptr, nullptr,
                   0);
}

}  // namespace

void Event::set() noexcept {
  state_.store(1, std::memory_order_release);
  // From here on only the address is used, never the object's memory.
  futex(&state_, FUTEX_WAKE_PRIVATE, 1);
}

void Event::wait() noexcept {
  while (state_.load(std::memory_order_acquire) == 0) {
    // Returns at once (EAGAIN) when set() already stored 1.
    futex(&state_, FUTEX_WAIT_PRIVATE, 0);
  }
}

}  // namespace distlock::net
