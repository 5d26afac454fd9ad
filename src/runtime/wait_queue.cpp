#include "runtime/wait_queue.hpp"

#include <charconv>
#include <utility>

namespace distlock::runtime {

void WaitQueue::push(std::shared_ptr<Waiter> waiter) {
  waiters_.push_back(std::move(waiter));
}

bool WaitQueue::remove(const Waiter* waiter) {
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (it->get() == waiter) {
      const bool unused = (*it)->signaled;
      waiters_.erase(it);
      return unused;
    }
  }
  return false;
}

std::vector<std::shared_ptr<Waiter>> WaitQueue::on_message(std::string_view payload) {
  std::int64_t count = 0;
  const auto [end, ec] = std::from_chars(payload.data(), payload.data() + payload.size(), count);
  if (ec != std::errc() || end != payload.data() + payload.size()) count = 0;
  bool one_left = true;
  std::vector<std::shared_ptr<Waiter>> woken;
  for (const auto& w : waiters_) {
    if (w->signaled) continue;
    bool wake = false;
    switch (w->policy) {
      case Wake::all:
        wake = true;
        break;
      case Wake::one:
        wake = std::exchange(one_left, false);
        break;
      case Wake::count_in_payload:
        wake = count > 0;
        if (wake) --count;
        break;
    }
    if (!wake) continue;
    w->signaled = true;
    woken.push_back(w);
  }
  return woken;
}

std::vector<std::shared_ptr<Waiter>> WaitQueue::all() const {
  return {waiters_.begin(), waiters_.end()};
}

}  // namespace distlock::runtime
