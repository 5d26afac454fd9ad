/// \file
/// Semaphore's asynchronous acquires with Asio completion tokens (the
/// contract is in <distlock/semaphore.hpp>). Including this header brings in
/// Asio; <distlock/semaphore.hpp> alone does not.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "distlock/async_wait.hpp"
#include "distlock/semaphore.hpp"

namespace distlock {
namespace detail {

/// Compiled in the library. Start an acquire of n permits for the Client
/// (true: acquired; false with no error: not in time) / for a new Permit (an
/// empty Permit with no error: not in time), waiting at most `wait` (nullopt:
/// as long as it takes). Bad input completes the receiver, posted.
std::shared_ptr<AsyncAcquire> async_semaphore_acquire_impl(
    const std::shared_ptr<sync::SemaphoreState>& state,
    std::int64_t n,
    std::optional<std::chrono::milliseconds> wait,
    std::unique_ptr<Receiver<bool>> receiver);
std::shared_ptr<AsyncAcquire> async_permit_acquire_impl(
    const std::shared_ptr<sync::SemaphoreState>& state,
    std::int64_t n,
    std::optional<std::chrono::milliseconds> wait,
    std::optional<std::chrono::milliseconds> lease,
    std::unique_ptr<Receiver<Permit>> receiver);
/// The executor the semaphore's handlers run on by default.
asio::any_io_executor semaphore_executor(const sync::SemaphoreState& state);

struct PermitIfValid {
  std::optional<Permit> operator()(Permit p) const {
    if (!p.valid()) return std::nullopt;
    return std::optional<Permit>(std::move(p));
  }
};

template <class Signature, class Token>
auto initiate_semaphore_acquire(Token&& token,
                                const std::shared_ptr<sync::SemaphoreState>& state,
                                std::int64_t n,
                                std::optional<std::chrono::milliseconds> wait) {
  return initiate_wait<Signature, bool>(
      std::forward<Token>(token), semaphore_executor(*state),
      [state, n, wait](std::unique_ptr<Receiver<bool>> r) {
        return async_semaphore_acquire_impl(state, n, wait, std::move(r));
      },
      PassResult{});
}

template <class Signature, class Adapt, class Token>
auto initiate_permit_acquire(Token&& token,
                             const std::shared_ptr<sync::SemaphoreState>& state,
                             std::int64_t n,
                             std::optional<std::chrono::milliseconds> wait,
                             std::optional<std::chrono::milliseconds> lease) {
  return initiate_wait<Signature, Permit>(
      std::forward<Token>(token), semaphore_executor(*state),
      [state, n, wait, lease](std::unique_ptr<Receiver<Permit>> r) {
        return async_permit_acquire_impl(state, n, wait, lease, std::move(r));
      },
      Adapt{});
}

}  // namespace detail

template <class Token>
auto Semaphore::async_acquire(std::int64_t n, Token&& token) {
  return detail::initiate_semaphore_acquire<void(std::error_code)>(std::forward<Token>(token),
                                                                   state_, n, std::nullopt);
}

template <class Rep, class Period, class Token>
auto Semaphore::async_try_acquire_for(std::int64_t n,
                                      const std::chrono::duration<Rep, Period>& wait,
                                      Token&& token) {
  return detail::initiate_semaphore_acquire<void(std::error_code, bool)>(
      std::forward<Token>(token), state_, n, detail::wait_ms(wait));
}

template <class Token>
auto Semaphore::async_acquire_permit(std::int64_t n, Token&& token) {
  return detail::initiate_permit_acquire<void(std::error_code, Permit), detail::PassResult>(
      std::forward<Token>(token), state_, n, std::nullopt, std::nullopt);
}

template <class Token>
auto Semaphore::async_acquire_permit(std::int64_t n,
                                     std::chrono::milliseconds lease,
                                     Token&& token) {
  return detail::initiate_permit_acquire<void(std::error_code, Permit), detail::PassResult>(
      std::forward<Token>(token), state_, n, std::nullopt, lease);
}

template <class Rep, class Period, class Token>
auto Semaphore::async_try_acquire_permit(std::int64_t n,
                                         const std::chrono::duration<Rep, Period>& wait,
                                         Token&& token) {
  return detail::initiate_permit_acquire<void(std::error_code, std::optional<Permit>),
                                         detail::PermitIfValid>(
      std::forward<Token>(token), state_, n, detail::wait_ms(wait), std::nullopt);
}

template <class Rep, class Period, class Token>
auto Semaphore::async_try_acquire_permit(std::int64_t n,
                                         const std::chrono::duration<Rep, Period>& wait,
                                         std::chrono::milliseconds lease,
                                         Token&& token) {
  return detail::initiate_permit_acquire<void(std::error_code, std::optional<Permit>),
                                         detail::PermitIfValid>(std::forward<Token>(token), state_,
                                                                n, detail::wait_ms(wait), lease);
}

}  // namespace distlock
