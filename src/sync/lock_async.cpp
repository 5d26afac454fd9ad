#include "distlock/lock_async.hpp"

#include "client_impl.hpp"
#include "distlock/error.hpp"
#include "runtime/identity.hpp"
#include "sync/acquire_op.hpp"
#include "sync/lock_ops.hpp"
#include "sync/lock_step.hpp"

namespace distlock::detail {

void async_acquire_impl(const Lock& lock, std::unique_ptr<Receiver<Lease>> receiver) {
  const auto& client = lock.client_impl();
  auto state = make_lease_state(client, lock.keys(), client->id() + ":" + runtime::random_token(),
                                std::nullopt);
  client->watchdog().add(state);
  auto op = std::make_shared<AcquireOp>(
      *client, std::make_unique<LockStep>(*client, state, 1), std::nullopt,
      [state, r = std::shared_ptr<Receiver<Lease>>(std::move(receiver))](AcquireOutcome o) {
        if (o.acquired) return r->complete({}, Lease(state));
        state->client->watchdog().remove(state.get());
        r->complete(o.ec ? o.ec : make_error_code(errc::closed), Lease());
      });
  op->start();
}

}  // namespace distlock::detail
