// MultiLock: all-or-nothing over Locks, built on Lock's public members only.
#include "distlock/multi_lock.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "backend/lock_engine.hpp"
#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "net/server_identity.hpp"
#include "sync/arguments.hpp"
#include "sync/services.hpp"

namespace distlock {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Deadline = std::optional<Clock::time_point>;
using sync::deadline_after;

constexpr std::string_view kWhat = "MultiLock: ";

// The server (resolved: "localhost" and "127.0.0.1" are one) and the
// database a part's Client names: databases of one server are different
// locks here.
struct PartServer {
  net::ServerIdentity server;
  int db = 0;

  // The second half of the canonical order: the same in every process whose
  // names resolve to the same addresses.
  std::string order() const { return server.addresses.front() + "/" + std::to_string(db); }
  bool same(const PartServer& other) const {
    return db == other.db && server.same_server(other.server);
  }
  std::string text() const { return server.text + "/" + std::to_string(db); }
};

PartServer server_of(const Lock& part) {
  const ClientOptions& o = detail::Access::services(part)->options;
  return {net::resolve_server_identity(o), o.db};
}

// Throws when two parts of one name are on one server: taking it twice
// through two Clients would wait for itself forever, and through one Client
// would count as two holds that one unlock does not undo. `order` is sorted
// by name, so parts of one name are neighbours.
void reject_twice(const std::vector<Lock>& parts,
                  const std::vector<std::pair<PartServer, std::size_t>>& order) {
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::string& name = parts[order[i].second].name();
    for (std::size_t j = i + 1; j < order.size() && parts[order[j].second].name() == name; ++j) {
      if (!order[i].first.same(order[j].first)) continue;
      throw Error(errc::invalid_argument, "MultiLock lists the lock '" + name + "' on " +
                                              order[i].first.text() + " twice (also as " +
                                              order[j].first.text() + ")");
    }
  }
}

// Sorts by (name, server) and rejects a lock listed twice.
std::vector<Lock> canonical(std::vector<Lock> parts) {
  if (parts.empty()) throw Error(errc::invalid_argument, "MultiLock needs at least one part");
  for (const Lock& part : parts) {
    if (const auto& engine = detail::Access::engine(part)) {
      throw Error(errc::not_supported, "MultiLock: the lock '" + part.name() + "' is a " +
                                           std::string(engine->backend()) +
                                           " lock; a MultiLock's parts must be Redis locks "
                                           "(docs/backends.md)");
    }
  }
  std::vector<std::pair<PartServer, std::size_t>> order;  // server, index into parts
  order.reserve(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) order.emplace_back(server_of(parts[i]), i);
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    const std::string& an = parts[a.second].name();
    const std::string& bn = parts[b.second].name();
    return an != bn ? an < bn : a.first.order() < b.first.order();
  });
  reject_twice(parts, order);
  std::vector<Lock> sorted;
  sorted.reserve(parts.size());
  for (const auto& e : order) sorted.push_back(parts[e.second]);
  return sorted;
}

// What a part may wait: the time left until the common deadline, rounded up
// (so the whole never gives up before the deadline), zero once it passed.
std::optional<milliseconds> left(Deadline deadline) {
  if (!deadline) return std::nullopt;
  const auto d = *deadline - Clock::now();
  return d.count() > 0 ? std::chrono::ceil<milliseconds>(d) : milliseconds(0);
}

// Releases parts [0, count) in reverse order, never stopping on a failure.
// Returns the first failure.
std::error_code release_first(std::vector<Lock>& parts, std::size_t count) noexcept {
  std::error_code first;
  for (std::size_t i = count; i-- > 0;) {
    std::error_code ec;
    parts[i].unlock(ec);
    if (ec && !first) first = ec;
  }
  return first;
}

// Takes parts in order with take(part, wait) (true = got it; false =
// contention or time out, or ec set in the error_code form; or it throws).
// One part not got releases every part taken before it.
template <class Take>
bool take_all(std::vector<Lock>& parts, Deadline deadline, Take& take) {
  std::size_t taken = 0;
  try {
    while (taken < parts.size() && take(parts[taken], left(deadline))) ++taken;
  } catch (...) {
    release_first(parts, taken);
    throw;
  }
  if (taken == parts.size()) return true;
  release_first(parts, taken);
  return false;
}

// Rounds of take_all until every part is taken with its lease still valid:
// with a fixed lease the first part may expire while a later one is waited
// for, and a hold that is already gone must not be reported as held.
template <class Take>
bool acquire(std::vector<Lock>& parts, Deadline deadline, Take take) {
  for (;;) {
    if (!take_all(parts, deadline, take)) return false;
    if (std::all_of(parts.begin(), parts.end(), [](const Lock& p) { return p.lease_valid(); })) {
      return true;
    }
    release_first(parts, parts.size());
    if (deadline && Clock::now() >= *deadline) return false;
  }
}

// The throwing form's part step: `wait` nullopt blocks until held.
bool take_or_throw(Lock& part,
                   std::optional<milliseconds> wait,
                   std::optional<milliseconds> lease) {
  if (!wait) {
    lease ? part.lock(*lease) : part.lock();
    return true;
  }
  return lease ? part.try_lock_for(*wait, *lease) : part.try_lock_for(*wait);
}

// The error_code form's part step.
bool take_or_report(Lock& part,
                    std::optional<milliseconds> wait,
                    std::optional<milliseconds> lease,
                    std::error_code& ec) {
  if (!wait) {
    lease ? part.lock(*lease, ec) : part.lock(ec);
    return !ec;
  }
  return part.try_lock_for(*wait, lease, ec);
}

bool acquire_throwing(std::vector<Lock>& parts,
                      Deadline deadline,
                      std::optional<milliseconds> lease) {
  auto take = [&](Lock& p, std::optional<milliseconds> wait) {
    return take_or_throw(p, wait, lease);
  };
  return acquire(parts, deadline, take);
}

bool acquire_reporting(std::vector<Lock>& parts,
                       Deadline deadline,
                       std::optional<milliseconds> lease,
                       std::error_code& ec) {
  ec.clear();
  auto take = [&](Lock& p, std::optional<milliseconds> wait) {
    return take_or_report(p, wait, lease, ec);
  };
  return acquire(parts, deadline, take) && !ec;
}

}  // namespace

MultiLock::MultiLock(std::vector<Lock> parts)
    : parts_(std::make_shared<std::vector<Lock>>(canonical(std::move(parts)))) {}

void MultiLock::lock() {
  acquire_throwing(*parts_, std::nullopt, std::nullopt);
}

void MultiLock::lock(std::error_code& ec) {
  acquire_reporting(*parts_, std::nullopt, std::nullopt, ec);
}

void MultiLock::lock(milliseconds lease) {
  sync::check_lease(lease, kWhat);
  acquire_throwing(*parts_, std::nullopt, lease);
}

void MultiLock::lock(milliseconds lease, std::error_code& ec) {
  if (sync::rejected(std::nullopt, lease, ec)) return;
  acquire_reporting(*parts_, std::nullopt, lease, ec);
}

bool MultiLock::try_lock() {
  return try_lock_for_ms(milliseconds(0), std::nullopt);
}

bool MultiLock::try_lock(std::error_code& ec) {
  return try_lock_for(milliseconds(0), std::nullopt, ec);
}

bool MultiLock::try_lock_for_ms(milliseconds wait, std::optional<milliseconds> lease) {
  sync::check_wait(wait, kWhat);
  sync::check_lease(lease, kWhat);
  return acquire_throwing(*parts_, deadline_after(wait), lease);
}

bool MultiLock::try_lock_for(milliseconds wait, milliseconds lease) {
  return try_lock_for_ms(wait, lease);
}

bool MultiLock::try_lock_for(milliseconds wait,
                             std::optional<milliseconds> lease,
                             std::error_code& ec) {
  if (sync::rejected(wait, lease, ec)) return false;
  return acquire_reporting(*parts_, deadline_after(wait), lease, ec);
}

void MultiLock::unlock() noexcept {
  release_first(*parts_, parts_->size());
}

void MultiLock::unlock(std::error_code& ec) noexcept {
  ec = release_first(*parts_, parts_->size());
}

bool MultiLock::lease_valid() const {
  return std::all_of(parts_->begin(), parts_->end(), [](const Lock& p) { return p.lease_valid(); });
}

std::optional<Clock::time_point> MultiLock::lease_deadline() const {
  std::optional<Clock::time_point> earliest;
  for (const Lock& p : *parts_) {
    const auto d = p.lease_deadline();
    if (!d) return std::nullopt;
    if (!earliest || *d < *earliest) earliest = d;
  }
  return earliest;
}

}  // namespace distlock
