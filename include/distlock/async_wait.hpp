/// \file
/// What the synchronizers' asynchronous waits share (semaphore_async.hpp,
/// latch_async.hpp, rate_limiter_async.hpp): starting a compiled operation
/// with a completion token and connecting the handler's cancellation slot to
/// it, as Lock's async_acquire does. Brings in Asio; users include the
/// primitive's *_async header (or <distlock/distlock.hpp>), not this one.
#pragma once

#include <asio/associated_cancellation_slot.hpp>
#include <asio/cancellation_type.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include "distlock/client_async.hpp"
#include "distlock/lock_async.hpp"
#include "distlock/wait_time.hpp"

namespace distlock::detail {

/// As AdaptingReceiver, for a handler taking only (ec): the operation's
/// result is dropped. Clears the handler's cancellation slot before calling it.
template <class Handler, class In, class Adapt>
class ErrorOnlyReceiver final : public Receiver<In> {
 public:
  ErrorOnlyReceiver(Handler handler, const asio::any_io_executor& fallback, Adapt)
      : handler_(std::move(handler)),
        work_(asio::prefer(asio::get_associated_executor(handler_, fallback),
                           asio::execution::outstanding_work.tracked)) {}

  void complete(std::error_code ec, In) override {
    auto ex = std::move(work_);
    asio::dispatch(ex, [h = std::move(handler_), ec]() mutable {
      asio::get_associated_cancellation_slot(h).clear();
      std::move(h)(ec);
    });
  }

 private:
  Handler handler_;
  std::decay_t<
      typename asio::prefer_result<asio::associated_executor_t<Handler, asio::any_io_executor>,
                                   asio::execution::outstanding_work_t::tracked_t>::type>
      work_;
};

/// The receiver for a handler of `Signature`: void(ec) or void(ec, Out).
template <class Signature>
struct WaitReceiverFor;
template <>
struct WaitReceiverFor<void(std::error_code)> {
  template <class H, class In, class Adapt>
  using type = ErrorOnlyReceiver<H, In, Adapt>;
};
template <class Out>
struct WaitReceiverFor<void(std::error_code, Out)> {
  template <class H, class In, class Adapt>
  using type = AdaptingReceiver<H, In, Out, Adapt>;
};

/// Starts an operation whose compiled part yields an `In`: `start(receiver)`
/// begins it (completing the receiver exactly once, never inline) and returns
/// its handle for cancellation; `adapt` turns the In into what the handler of
/// `Signature` takes. `fallback`: the executor handlers run on by default.
template <class Signature, class In, class Token, class Start, class Adapt>
auto initiate_wait(Token&& token, asio::any_io_executor fallback, Start start, Adapt adapt) {
  return asio::async_initiate<Token, Signature>(
      [](auto handler, asio::any_io_executor ex, Start begin, Adapt a) {
        using H = std::decay_t<decltype(handler)>;
        using R = typename WaitReceiverFor<Signature>::template type<H, In, Adapt>;
        auto slot = asio::get_associated_cancellation_slot(handler);
        std::unique_ptr<Receiver<In>> receiver = std::make_unique<R>(std::move(handler), ex, a);
        std::shared_ptr<AsyncAcquire> op = begin(std::move(receiver));
        if (slot.is_connected()) {
          /// The handle refers to the operation weakly: it may outlive it.
          slot.assign([op](asio::cancellation_type type) {
            if (type != asio::cancellation_type::none) op->cancel();
          });
        }
      },
      token, std::move(fallback), std::move(start), std::move(adapt));
}

/// Adapters from a compiled operation's result to a handler's argument.
struct PassResult {
  template <class T>
  T operator()(T t) const {
    return t;
  }
};

}  // namespace distlock::detail
