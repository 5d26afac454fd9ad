#include "sync/holding.hpp"

namespace distlock::detail {

Holding::Holding(std::shared_ptr<Services> s,
                 std::shared_ptr<const LockKeys> k,
                 std::string o,
                 std::optional<std::chrono::milliseconds> lease)
    : LeaseState(k->name,
                 o,
                 lease.value_or(s->options.watchdog_timeout),
                 !lease.has_value(),
                 Renewal{Renewal::Kind::hash_field, k->name, o},
                 s->options.clock_drift_factor,
                 &s->options.on_lease_lost),
      services(std::move(s)),
      keys(std::move(k)) {}

}  // namespace distlock::detail
