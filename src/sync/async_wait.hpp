// The compiled side the synchronizers' async waits share (semaphore, latch,
// rate limiter; include/distlock/async_wait.hpp is the template side): a
// cancellation handle over an AcquireOp, completing a receiver of an
// operation that never started, and running a step without a holding.
#pragma once

#include <asio/post.hpp>
#include <asio/system_executor.hpp>
#include <memory>
#include <optional>
#include <system_error>

#include "distlock/lock_async.hpp"
#include "sync/acquire_op.hpp"

namespace distlock::sync {

struct Services;

// A handle whose cancel() aborts `op` with operation_aborted (weak: the op
// may finish first; then cancel() does nothing). An empty op gives a handle
// that does nothing.
std::shared_ptr<detail::AsyncAcquire> cancel_handle(std::weak_ptr<AcquireOp> op);

// Completes `receiver` with (ec, T{}) on the system executor, never inside
// the initiating call (bad input, a closed Client), and returns a handle
// whose cancel() does nothing.
template <class T>
std::shared_ptr<detail::AsyncAcquire> complete_at_once(
    std::unique_ptr<detail::Receiver<T>> receiver, std::error_code ec) {
  asio::post(asio::system_executor(),
             [r = std::shared_ptr<detail::Receiver<T>>(std::move(receiver)), ec] {
               r->complete(ec, T{});
             });
  return cancel_handle({});
}

// Runs `step` (whose undo() decides what an unanswered attempt leaves) until
// `deadline` (nullopt: as long as it takes) and hands `receiver`
// (ec, acquired): false with no error when the deadline passed. Keeps
// `services` alive until the outcome is delivered. For steps without a
// holding (the latch, the rate limiter).
std::shared_ptr<detail::AsyncAcquire> start_async_step(
    const std::shared_ptr<Services>& services,
    std::unique_ptr<AcquireStep> step,
    std::optional<Clock::time_point> deadline,
    std::unique_ptr<detail::Receiver<bool>> receiver);

}  // namespace distlock::sync
