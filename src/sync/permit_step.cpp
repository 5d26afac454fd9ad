#include "sync/permit_step.hpp"

#include <algorithm>

#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/permit_primitive.hpp"

namespace distlock::sync {

// HoldingStep's count 0: its undo releases "0", which gives back all the
// holder holds and retires it (PermitPrimitive::release_args).
PermitStep::PermitStep(Services& client,
                       const PermitPrimitive& semaphore,
                       std::shared_ptr<Holding> state,
                       std::int64_t n)
    : HoldingStep(client, std::move(state), 0),
      n_(n),
      n_text_(std::to_string(n)),
      channel_(semaphore.channel) {
  keys_ = semaphore.reclaim_keys();
  args_ = {state_->owner, n_text_, state_->ttl_text, channel_};
}

const script::Script& PermitStep::script() const {
  return script::scripts().semaphore_acquire;
}

Attempt PermitStep::interpret(const Value& reply) const {
  if (reply.is_nil()) return Attempt::acquired(std::nullopt);
  if (reply.is_integer()) {
    const auto wait = reply.as_integer();
    if (wait < 0) return Attempt::contended(std::nullopt);
    // The earliest lease could end then (a crashed holder's): look again,
    // but at least every fallback() (a release's message may serve another
    // waiter first).
    return Attempt::contended(std::min(std::chrono::milliseconds(wait + 1), fallback()));
  }
  return Attempt::failed(errc::protocol_error, "unexpected semaphore reply " + reply.to_string());
}

}  // namespace distlock::sync
