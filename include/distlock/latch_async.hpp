/// \file
/// Latch's asynchronous waits with Asio completion tokens (the contract is in
/// <distlock/latch.hpp>). Including this header brings in Asio;
/// <distlock/latch.hpp> alone does not.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <utility>

#include "distlock/async_wait.hpp"
#include "distlock/latch.hpp"

namespace distlock {
namespace detail {

/// Compiled in the library: starts a wait for the latch to open, at most
/// `wait` (nullopt: as long as it takes); the receiver gets true when it
/// opened, false with no error when `wait` passed first. A negative wait
/// completes the receiver with invalid_argument, posted.
std::shared_ptr<AsyncAcquire> async_latch_wait_impl(
    const std::shared_ptr<sync::Services>& client,
    const std::shared_ptr<const sync::LatchNames>& names,
    std::optional<std::chrono::milliseconds> wait,
    std::unique_ptr<Receiver<bool>> receiver);

template <class Signature, class Token>
auto initiate_latch_wait(Token&& token,
                         const std::shared_ptr<sync::Services>& client,
                         const std::shared_ptr<const sync::LatchNames>& names,
                         std::optional<std::chrono::milliseconds> wait) {
  return initiate_wait<Signature, bool>(
      std::forward<Token>(token), client_executor(*client),
      [client, names, wait](std::unique_ptr<Receiver<bool>> r) {
        return async_latch_wait_impl(client, names, wait, std::move(r));
      },
      PassResult{});
}

}  // namespace detail

template <class Token>
auto Latch::async_wait(Token&& token) {
  return detail::initiate_latch_wait<void(std::error_code)>(std::forward<Token>(token), client_,
                                                            names_, std::nullopt);
}

template <class Rep, class Period, class Token>
auto Latch::async_wait_for(const std::chrono::duration<Rep, Period>& wait, Token&& token) {
  return detail::initiate_latch_wait<void(std::error_code, bool)>(
      std::forward<Token>(token), client_, names_, detail::wait_ms(wait));
}

}  // namespace distlock
