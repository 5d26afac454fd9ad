// Semaphore's async acquires: the blocking forms' acquire loop
// without the blocking wait. The Client's permits run on its shared holder
// (SemaphoreState); a Permit's on its own holder, as the blocking forms.
#include "distlock/semaphore_async.hpp"

#include "distlock/error.hpp"
#include "runtime/executor.hpp"
#include "runtime/watchdog.hpp"
#include "sync/async_wait.hpp"
#include "sync/lock_args.hpp"
#include "sync/semaphore_client_permits.hpp"

namespace distlock::detail {
namespace {

using sync::AcquireStep;
using sync::Attempt;
using sync::Clock;
using sync::PermitHolding;
using sync::SemaphoreState;
using sync::SemaphoreStep;

// SemaphoreStep on the Client's shared holder, plus what the async form
// needs: an attempt cancelled while in flight comes back after the acquire
// has been booked, and must give back what it took (the blocking form is
// never cancelled). The shared holder cannot simply be retired then: it may
// hold the Client's other permits.
class ClientPermitsStep final : public AcquireStep {
 public:
  ClientPermitsStep(std::shared_ptr<SemaphoreState> state,
                    std::shared_ptr<PermitHolding> holder,
                    std::int64_t n)
      : state_(std::move(state)), holder_(holder), n_(n), inner_(std::move(holder), n, false) {}

  const script::Script& script() const override { return inner_.script(); }
  std::span<const std::string_view> keys() const override { return inner_.keys(); }
  std::span<const std::string_view> args() const override { return inner_.args(); }
  std::string_view route_key() const override { return inner_.route_key(); }
  Attempt interpret(const Value& reply) const override {
    Attempt a = inner_.interpret(reply);
    took_ = a.kind == Attempt::Kind::acquired;
    return a;
  }
  void acquired(const Attempt& a, Clock::time_point sent) override { inner_.acquired(a, sent); }
  void undo() override {
    if (!finished_) {
      uncertain_ = true;  // booked by end_acquire, which retires the holder when it can
      return;
    }
    state_->undo_late(holder_, n_, took_);
  }
  std::string_view channel() const override { return inner_.channel(); }
  runtime::Wake wake() const override { return inner_.wake(); }
  std::chrono::milliseconds fallback() const override { return inner_.fallback(); }
  MetricPrimitive metric() const override { return MetricPrimitive::semaphore; }
  std::chrono::nanoseconds validity() const override { return inner_.validity(); }
  void finished(bool) override { finished_ = true; }

  bool uncertain() const noexcept { return uncertain_; }

 private:
  const std::shared_ptr<SemaphoreState> state_;
  const std::shared_ptr<PermitHolding> holder_;
  const std::int64_t n_;
  SemaphoreStep inner_;
  mutable bool took_ = false;  // the last reply said acquired (I/O thread only)
  bool uncertain_ = false;
  bool finished_ = false;
};

// Bad input, checked before anything is sent (Lock's async forms report
// through the handler too, never by throwing).
std::error_code check(const SemaphoreState& state,
                      std::int64_t n,
                      std::optional<std::chrono::milliseconds> wait,
                      std::optional<std::chrono::milliseconds> lease) {
  if (n <= 0 || (wait && wait->count() < 0) || (lease && lease->count() <= 0)) {
    return make_error_code(errc::invalid_argument);
  }
  if (state.services->executor.closed()) return make_error_code(errc::closed);
  return {};
}

}  // namespace

std::shared_ptr<AsyncAcquire> async_semaphore_acquire_impl(
    const std::shared_ptr<SemaphoreState>& state,
    std::int64_t n,
    std::optional<std::chrono::milliseconds> wait,
    std::unique_ptr<Receiver<bool>> receiver) {
  if (auto ec = check(*state, n, wait, std::nullopt)) {
    return sync::complete_at_once(std::move(receiver), ec);
  }
  auto holder = state->begin_acquire();
  auto step = std::make_unique<ClientPermitsStep>(state, holder, n);
  ClientPermitsStep* s = step.get();  // owned by the op, alive while `done` runs
  auto op = std::make_shared<sync::AcquireOp>(
      *state->services, std::move(step), sync::deadline_after(wait),
      [state, n, s,
       r = std::shared_ptr<Receiver<bool>>(std::move(receiver))](sync::AcquireOutcome o) {
        state->end_acquire(n, o.acquired, s->uncertain());
        r->complete(o.ec, !o.ec && o.acquired);
      });
  op->start();
  return sync::cancel_handle(op);
}

std::shared_ptr<AsyncAcquire> async_permit_acquire_impl(
    const std::shared_ptr<SemaphoreState>& state,
    std::int64_t n,
    std::optional<std::chrono::milliseconds> wait,
    std::optional<std::chrono::milliseconds> lease,
    std::unique_ptr<Receiver<Permit>> receiver) {
  if (auto ec = check(*state, n, wait, lease)) {
    return sync::complete_at_once(std::move(receiver), ec);
  }
  auto holding = std::make_shared<PermitHolding>(state->services, state->keys, lease);
  state->services->watchdog.add(holding);
  // The Permit's holder is its own: an unanswered or cancelled attempt is
  // undone by retiring it (undo_releases), whenever its reply comes.
  auto op = std::make_shared<sync::AcquireOp>(
      *state->services, std::make_unique<SemaphoreStep>(holding, n, true),
      sync::deadline_after(wait),
      [holding, n,
       r = std::shared_ptr<Receiver<Permit>>(std::move(receiver))](sync::AcquireOutcome o) {
        if (o.acquired && !o.ec) return r->complete({}, Permit(holding, n));
        holding->services->watchdog.remove(holding.get());
        r->complete(o.ec, Permit());
      });
  op->start();
  return sync::cancel_handle(op);
}

asio::any_io_executor semaphore_executor(const SemaphoreState& state) {
  return client_executor(*state.services);
}

}  // namespace distlock::detail
