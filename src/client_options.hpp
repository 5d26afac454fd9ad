// Checks on ClientOptions that the public header does not declare.
#pragma once

#include "distlock/client_options.hpp"

namespace distlock {

// Throws Error with errc::invalid_argument naming the first field that no
// Client can run with (a missing host or seed, a non-positive timeout, a
// clock-drift factor outside [0, 0.5), ...); returns when every field is
// usable. A Client checks its options with it before it connects.
void validate(const ClientOptions& options);

}  // namespace distlock
