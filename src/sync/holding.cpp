#include "sync/holding.hpp"

namespace distlock::sync {

Holding::Holding(std::shared_ptr<Services> s,
                 std::shared_ptr<const LockKeys> k,
                 std::string o,
                 std::optional<std::chrono::milliseconds> lease)
    : runtime::LeaseState(k->name,
                          o,
                          lease.value_or(s->options.watchdog_timeout),
                          !lease.has_value(),
                          runtime::Renewal{runtime::Renewal::Kind::hash_field, k->name, o},
                          s->options.clock_drift_factor,
                          &s->options.on_lease_lost),
      services(std::move(s)),
      keys(std::move(k)) {}

}  // namespace distlock::sync
