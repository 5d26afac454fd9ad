// Asynchronous acquire with Asio completion tokens. Including this header
// brings in Asio; <distlock/lock.hpp> alone does not.
#pragma once

#include "distlock/client_async.hpp"
#include "distlock/lock.hpp"

namespace distlock {
namespace detail {

// Compiled in the library: starts an acquire of a handle-owned lease.
void async_acquire_impl(const Lock& lock, std::unique_ptr<Receiver<Lease>> receiver);

}  // namespace detail

template <class Token>
auto Lock::async_acquire(Token&& token) {
  return asio::async_initiate<Token, void(std::error_code, Lease)>(
      [](auto handler, Lock lock) {
        using H = std::decay_t<decltype(handler)>;
        auto receiver = std::make_unique<detail::HandlerReceiver<H, Lease>>(
            std::move(handler), detail::client_executor(lock.client_impl()));
        detail::async_acquire_impl(lock, std::move(receiver));
      },
      token, *this);
}

}  // namespace distlock
