// MultiLease: a MultiLock's parts held by a handle, as one Lease per part.
#include <algorithm>

#include "distlock/multi_lock.hpp"

namespace distlock {

MultiLease::MultiLease(std::vector<Lease> parts) noexcept : parts_(std::move(parts)) {}

MultiLease::~MultiLease() {
  release();
}

MultiLease::MultiLease(MultiLease&& other) noexcept : parts_(std::move(other.parts_)) {
  other.parts_.clear();
}

MultiLease& MultiLease::operator=(MultiLease&& other) noexcept {
  if (this != &other) {
    release();
    parts_ = std::move(other.parts_);
    other.parts_.clear();
  }
  return *this;
}

bool MultiLease::valid() const noexcept {
  return !parts_.empty() &&
         std::all_of(parts_.begin(), parts_.end(), [](const Lease& l) { return l.valid(); });
}

std::chrono::steady_clock::time_point MultiLease::deadline() const noexcept {
  std::chrono::steady_clock::time_point earliest{};
  for (const Lease& l : parts_) {
    if (earliest == std::chrono::steady_clock::time_point{} || l.deadline() < earliest) {
      earliest = l.deadline();
    }
  }
  return earliest;
}

void MultiLease::release() noexcept {
  std::error_code ignored;
  release(ignored);
}

void MultiLease::release(std::error_code& ec) noexcept {
  ec.clear();
  // Reverse canonical order, as MultiLock::unlock; every part, whatever fails.
  std::vector<Lease> parts = std::move(parts_);
  parts_.clear();
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    std::error_code part;
    it->release(part);
    if (part && !ec) ec = part;
  }
}

}  // namespace distlock
