// What a RedlockGroup shares with its MetricsServer: the group's options and
// the Client parts (one I/O thread, the watchdog, the waiters, the pending
// releases) running over a topology::Quorum of its masters.
#pragma once

#include <memory>

#include "client_impl.hpp"
#include "distlock/redlock.hpp"

namespace distlock::topology {
class Quorum;
}

namespace distlock::detail {

struct RedlockGroupState {
  RedlockOptions options;
  std::shared_ptr<ClientImpl> client;
  topology::Quorum* quorum = nullptr;  // owned by client

  // The client's metrics without a client id (a group has none).
  MetricsSnapshot metrics() const;
};

}  // namespace distlock::detail
