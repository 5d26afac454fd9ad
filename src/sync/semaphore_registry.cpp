#include "sync/semaphore_registry.hpp"

#include <vector>

#include "sync/semaphore_state.hpp"

namespace distlock::sync {

std::shared_ptr<SemaphoreState> SemaphoreRegistry::state(std::shared_ptr<Services> services,
                                                         std::string name) {
  const std::lock_guard guard(mutex_);
  if (auto live = states_[name].lock()) return live;
  // Drop entries of states that are gone, so the map does not grow with
  // every name ever used.
  std::erase_if(states_, [](const auto& e) { return e.second.expired(); });
  auto state = std::make_shared<SemaphoreState>(std::move(services), name);  // validates
  states_[std::move(name)] = state;
  return state;
}

void SemaphoreRegistry::close() noexcept {
  std::vector<std::shared_ptr<SemaphoreState>> live;
  {
    const std::lock_guard guard(mutex_);
    for (const auto& [name, weak] : states_) {
      if (auto state = weak.lock()) live.push_back(std::move(state));
    }
    states_.clear();
  }
  for (const auto& state : live) state->close();
}

}  // namespace distlock::sync
