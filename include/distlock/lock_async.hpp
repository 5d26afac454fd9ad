/// \file
/// Asynchronous acquire and release with Asio completion tokens. Including
/// this header brings in Asio; <distlock/lock.hpp> alone does not.
#pragma once

#include <asio/associated_cancellation_slot.hpp>
#include <asio/cancellation_type.hpp>
#include <chrono>
#include <optional>

#include "distlock/client_async.hpp"
#include "distlock/lock.hpp"

namespace distlock {
namespace detail {

/// A started asynchronous acquire, for cancellation.
class AsyncAcquire {
 public:
  virtual ~AsyncAcquire() = default;
  /// Any thread: ends the wait with asio::error::operation_aborted. An
  /// attempt already in flight is undone if it turns out to have acquired.
  virtual void cancel() = 0;
};

/// Compiled in the library: starts an acquire of a handle-owned lease that
/// waits at most `wait` (nullopt: as long as it takes). The receiver gets an
/// empty Lease and no error when it was not acquired in time.
std::shared_ptr<AsyncAcquire> async_acquire_impl(const Lock& lock,
                                                 std::optional<std::chrono::milliseconds> wait,
                                                 std::unique_ptr<Receiver<Lease>> receiver);
/// Compiled in the library: releases `lease` without blocking.
void async_release_impl(Lease& lease, std::unique_ptr<Receiver<std::error_code>> receiver);
/// The executor an acquire's handler runs on by default: the lock's Client's
/// I/O executor.
asio::any_io_executor lock_executor(const Lock& lock);
/// The executor a release's handler runs on by default: the lease's Client's
/// I/O executor (the system executor for an empty Lease).
asio::any_io_executor lease_executor(const Lease& lease);

template <class Token, class Signature, class Result, class Adapt>
auto initiate_acquire(Token&& token,
                      const Lock& lock,
                      std::optional<std::chrono::milliseconds> wait,
                      Adapt adapt) {
  return asio::async_initiate<Token, Signature>(
      [adapt](auto handler, Lock l, std::optional<std::chrono::milliseconds> w) {
        using H = std::decay_t<decltype(handler)>;
        auto slot = asio::get_associated_cancellation_slot(handler);
        auto receiver = std::make_unique<AdaptingReceiver<H, Lease, Result, Adapt>>(
            std::move(handler), lock_executor(l), adapt);
        auto op = async_acquire_impl(l, w, std::move(receiver));
        if (slot.is_connected()) {
          /// The handle refers to the operation weakly: it may outlive it.
          slot.assign([op](asio::cancellation_type type) {
            if (type != asio::cancellation_type::none) op->cancel();
          });
        }
      },
      token, lock, wait);
}

}  // namespace detail

template <class Token>
auto Lock::async_acquire(Token&& token) {
  return detail::initiate_acquire<Token, void(std::error_code, Lease), Lease>(
      std::forward<Token>(token), *this, std::nullopt, [](Lease l) { return l; });
}

template <class Rep, class Period, class Token>
auto Lock::async_try_acquire_for(const std::chrono::duration<Rep, Period>& wait, Token&& token) {
  return detail::initiate_acquire<Token, void(std::error_code, std::optional<Lease>),
                                  std::optional<Lease>>(std::forward<Token>(token), *this,
                                                        detail::wait_ms(wait),
                                                        [](Lease l) -> std::optional<Lease> {
                                                          if (!l.valid()) return std::nullopt;
                                                          return std::optional<Lease>(std::move(l));
                                                        });
}

template <class Token>
auto Lease::async_release(Token&& token) {
  return asio::async_initiate<Token, void(std::error_code)>(
      [](auto handler, Lease* lease) {
        using H = std::decay_t<decltype(handler)>;
        auto receiver = std::make_unique<detail::ErrorReceiver<H>>(std::move(handler),
                                                                   detail::lease_executor(*lease));
        detail::async_release_impl(*lease, std::move(receiver));
      },
      token, this);
}

}  // namespace distlock
