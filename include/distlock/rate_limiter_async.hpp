/// \file
/// RateLimiter's asynchronous acquires with Asio completion tokens (the
/// contract is in <distlock/rate_limiter.hpp>). Including this header brings
/// in Asio; <distlock/rate_limiter.hpp> alone does not.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "distlock/async_wait.hpp"
#include "distlock/rate_limiter.hpp"

namespace distlock {
namespace detail {

/// Compiled in the library: starts an acquire of n permits of the limiter
/// `name`, waiting at most `wait` (nullopt: as long as it takes); the
/// receiver gets true when taken, false with no error when not due in time.
/// n <= 0 or a negative wait complete the receiver with invalid_argument,
/// posted.
std::shared_ptr<AsyncAcquire> async_rate_limiter_acquire_impl(
    const std::shared_ptr<sync::Services>& client,
    const std::shared_ptr<const std::string>& name,
    std::int64_t n,
    std::optional<std::chrono::milliseconds> wait,
    std::unique_ptr<Receiver<bool>> receiver);

template <class Signature, class Token>
auto initiate_rate_acquire(Token&& token,
                           const std::shared_ptr<sync::Services>& client,
                           const std::shared_ptr<const std::string>& name,
                           std::int64_t n,
                           std::optional<std::chrono::milliseconds> wait) {
  return initiate_wait<Signature, bool>(
      std::forward<Token>(token), client_executor(*client),
      [client, name, n, wait](std::unique_ptr<Receiver<bool>> r) {
        return async_rate_limiter_acquire_impl(client, name, n, wait, std::move(r));
      },
      PassResult{});
}

}  // namespace detail

template <class Token>
auto RateLimiter::async_acquire(std::int64_t n, Token&& token) {
  return detail::initiate_rate_acquire<void(std::error_code)>(std::forward<Token>(token), client_,
                                                              name_, n, std::nullopt);
}

template <class Rep, class Period, class Token>
auto RateLimiter::async_try_acquire_for(std::int64_t n,
                                        const std::chrono::duration<Rep, Period>& wait,
                                        Token&& token) {
  return detail::initiate_rate_acquire<void(std::error_code, bool)>(
      std::forward<Token>(token), client_, name_, n, detail::wait_ms(wait));
}

}  // namespace distlock
