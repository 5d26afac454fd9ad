#include "sync/holding.hpp"

namespace distlock::sync {

Holding::Holding(std::shared_ptr<Services> s,
                 std::shared_ptr<const Primitive> p,
                 std::string o,
                 std::optional<std::chrono::milliseconds> lease)
    : runtime::LeaseState(p->name(),
                          o,
                          lease.value_or(s->options.watchdog_timeout),
                          !lease.has_value(),
                          p->renewal(o),
                          s->options.clock_drift_factor,
                          &s->options.on_lease_lost),
      services(std::move(s)),
      primitive(std::move(p)),
      release_tag(primitive->release_tag(owner)) {}

}  // namespace distlock::sync
