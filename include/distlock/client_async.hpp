/// \file
/// Asynchronous commands with Asio completion tokens. Including this header
/// brings in Asio; <distlock/client.hpp> alone does not.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/dispatch.hpp>
#include <asio/execution/outstanding_work.hpp>
#include <asio/post.hpp>
#include <asio/prefer.hpp>
#include <asio/system_executor.hpp>
#include <memory>
#include <type_traits>
#include <utility>

#include "distlock/client.hpp"

namespace distlock {
namespace sync {
struct Services;
}

namespace detail {

/// Receives the outcome of one asynchronous operation exactly once, on the
/// Client's I/O thread; the implementation hands it to the user's handler.
template <class Result>
class Receiver {
 public:
  virtual ~Receiver() = default;
  virtual void complete(std::error_code ec, Result result) = 0;
};
using AsyncReceiver = Receiver<Value>;

/// Compiled in the library: queue one command for `receiver`. Failures to
/// queue are delivered through the receiver too, posted, never inline.
void async_command_impl(const std::shared_ptr<ClientImpl>& client,
                        std::vector<std::string> args,
                        std::unique_ptr<AsyncReceiver> receiver);
asio::any_io_executor client_executor(const std::shared_ptr<ClientImpl>& client);
/// The executor handlers run on by default: the Client's I/O executor, or the
/// system executor once the Client is closed (its I/O thread has stopped).
asio::any_io_executor client_executor(const sync::Services& services);

/// Runs the user's handler on its associated executor (by default the Client's
/// I/O executor), keeping that executor's work count up until then.
template <class Handler, class Result>
class HandlerReceiver final : public Receiver<Result> {
 public:
  HandlerReceiver(Handler handler, const asio::any_io_executor& fallback)
      : handler_(std::move(handler)),
        work_(asio::prefer(asio::get_associated_executor(handler_, fallback),
                           asio::execution::outstanding_work.tracked)) {}

  void complete(std::error_code ec, Result result) override {
    auto ex = std::move(work_);
    asio::dispatch(ex, [h = std::move(handler_), ec, r = std::move(result)]() mutable {
      std::move(h)(ec, std::move(r));
    });
  }

 private:
  Handler handler_;
  /// decay: for an executor without the property prefer() is the identity and
  /// its result type is an rvalue reference, which must not be stored.
  std::decay_t<
      typename asio::prefer_result<asio::associated_executor_t<Handler, asio::any_io_executor>,
                                   asio::execution::outstanding_work_t::tracked_t>::type>
      work_;
};

/// As HandlerReceiver, for a handler taking (ec, Out): `adapt` turns the
/// operation's In into the Out the handler takes. Clears the handler's
/// cancellation slot on the handler's executor (where cancellation is emitted)
/// before calling it.
template <class Handler, class In, class Out, class Adapt>
class AdaptingReceiver final : public Receiver<In> {
 public:
  AdaptingReceiver(Handler handler, const asio::any_io_executor& fallback, Adapt adapt)
      : handler_(std::move(handler)),
        adapt_(std::move(adapt)),
        work_(asio::prefer(asio::get_associated_executor(handler_, fallback),
                           asio::execution::outstanding_work.tracked)) {}

  void complete(std::error_code ec, In result) override {
    auto ex = std::move(work_);
    asio::dispatch(ex, [h = std::move(handler_), ec, r = adapt_(std::move(result))]() mutable {
      asio::get_associated_cancellation_slot(h).clear();
      std::move(h)(ec, std::move(r));
    });
  }

 private:
  Handler handler_;
  Adapt adapt_;
  std::decay_t<
      typename asio::prefer_result<asio::associated_executor_t<Handler, asio::any_io_executor>,
                                   asio::execution::outstanding_work_t::tracked_t>::type>
      work_;
};

/// For a handler taking only (ec).
template <class Handler>
class ErrorReceiver final : public Receiver<std::error_code> {
 public:
  ErrorReceiver(Handler handler, const asio::any_io_executor& fallback)
      : handler_(std::move(handler)),
        work_(asio::prefer(asio::get_associated_executor(handler_, fallback),
                           asio::execution::outstanding_work.tracked)) {}

  void complete(std::error_code ec, std::error_code) override {
    auto ex = std::move(work_);
    asio::dispatch(ex, [h = std::move(handler_), ec]() mutable { std::move(h)(ec); });
  }

 private:
  Handler handler_;
  std::decay_t<
      typename asio::prefer_result<asio::associated_executor_t<Handler, asio::any_io_executor>,
                                   asio::execution::outstanding_work_t::tracked_t>::type>
      work_;
};

}  // namespace detail

/// The Client's I/O executor. Coroutines and handlers run on it complete every
/// distlock operation without a hop to another thread: the fastest way to
/// drive many async acquires from one thread (docs/performance.md, "Async").
/// What runs there must never block: blocking distlock calls fail there with
/// invalid_argument, and anything else that blocks stalls every connection
/// of the Client. A closed or moved-from Client gives the system executor,
/// so handlers still run. Thread-safe.
inline asio::any_io_executor get_executor(const Client& client) {
  if (!detail::Access::impl(client)) return asio::system_executor();
  return detail::client_executor(detail::Access::impl(client));
}

template <class Token>
auto Client::async_command(std::vector<std::string> args, Token&& token) {
  return asio::async_initiate<Token, void(std::error_code, Value)>(
      [](auto handler, std::shared_ptr<detail::ClientImpl> client, std::vector<std::string> a) {
        using H = std::decay_t<decltype(handler)>;
        auto receiver = std::make_unique<detail::HandlerReceiver<H, Value>>(
            std::move(handler), detail::client_executor(client));
        detail::async_command_impl(client, std::move(a), std::move(receiver));
      },
      token, impl_, std::move(args));
}

}  // namespace distlock
