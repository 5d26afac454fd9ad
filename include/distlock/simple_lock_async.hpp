/// \file
/// SimpleLock's asynchronous acquire with Asio completion tokens. Including
/// this header brings in Asio; <distlock/simple_lock.hpp> alone does not.
#pragma once

#include <utility>

#include "distlock/lock_async.hpp"
#include "distlock/simple_lock.hpp"

namespace distlock {

template <class Token>
auto SimpleLock::async_acquire(Token&& token) {
  return lock_.async_acquire(std::forward<Token>(token));
}

template <class Rep, class Period, class Token>
auto SimpleLock::async_try_acquire_for(const std::chrono::duration<Rep, Period>& wait,
                                       Token&& token) {
  return lock_.async_try_acquire_for(wait, std::forward<Token>(token));
}

}  // namespace distlock
