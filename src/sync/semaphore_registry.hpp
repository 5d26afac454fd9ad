// The semaphore states of one Client, by name: a part the Client owns, so
// every Semaphore of one name made by that Client shares one count of held
// permits, and closing the Client lets them all go.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace distlock::sync {

class SemaphoreState;
struct Services;

class SemaphoreRegistry {
 public:
  // The state of `name` for the Client behind `services` (whose registry
  // this is): the live one, or a new one. Throws Error(invalid_argument) for
  // a bad name (empty, over 64 KiB).
  std::shared_ptr<SemaphoreState> state(std::shared_ptr<Services> services, std::string name);

  // The Client closed: its states stop holding (the server ends their
  // leases) and no longer keep themselves alive. Later state() calls still
  // work (their acquires fail as closed).
  void close() noexcept;

 private:
  std::mutex mutex_;
  // Weak: a state lives while a Semaphore object or its own holder keeps it.
  std::unordered_map<std::string, std::weak_ptr<SemaphoreState>> states_;
};

}  // namespace distlock::sync
