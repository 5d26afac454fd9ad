/// \file
/// MultiLock's asynchronous acquires and MultiLease's asynchronous release
/// with Asio completion tokens (the contract is in
/// <distlock/multi_lock.hpp>). Including this header brings in Asio;
/// <distlock/multi_lock.hpp> alone does not.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "distlock/async_wait.hpp"
#include "distlock/multi_lock.hpp"

namespace distlock {
namespace detail {

/// Compiled in the library: starts taking every one of `parts` (in their
/// order) as handle-owned Leases, waiting at most `wait` in all (nullopt: as
/// long as it takes). The receiver gets an empty MultiLease and no error
/// when not every part was got in time. Bad input completes it, posted.
std::shared_ptr<AsyncAcquire> async_multi_lock_impl(const std::shared_ptr<std::vector<Lock>>& parts,
                                                    std::optional<std::chrono::milliseconds> wait,
                                                    std::unique_ptr<Receiver<MultiLease>> receiver);
/// Compiled in the library: releases every part of `lease` (which is empty
/// from then on) in reverse order without blocking.
void async_multi_release_impl(MultiLease& lease,
                              std::unique_ptr<Receiver<std::error_code>> receiver);
/// The executor the handlers run on by default: the first part's Client's
/// I/O executor (the system executor when there is none).
asio::any_io_executor multi_lock_executor(const std::vector<Lock>& parts);
asio::any_io_executor multi_lease_executor(const MultiLease& lease);

struct MultiLeaseIfValid {
  std::optional<MultiLease> operator()(MultiLease l) const {
    if (!l.valid()) return std::nullopt;
    return std::optional<MultiLease>(std::move(l));
  }
};

template <class Signature, class Adapt, class Token>
auto initiate_multi_lock(Token&& token,
                         const std::shared_ptr<std::vector<Lock>>& parts,
                         std::optional<std::chrono::milliseconds> wait) {
  return initiate_wait<Signature, MultiLease>(
      std::forward<Token>(token), multi_lock_executor(*parts),
      [parts, wait](std::unique_ptr<Receiver<MultiLease>> r) {
        return async_multi_lock_impl(parts, wait, std::move(r));
      },
      Adapt{});
}

}  // namespace detail

template <class Token>
auto MultiLock::async_lock(Token&& token) {
  return detail::initiate_multi_lock<void(std::error_code, MultiLease), detail::PassResult>(
      std::forward<Token>(token), parts_, std::nullopt);
}

template <class Rep, class Period, class Token>
auto MultiLock::async_try_lock_for(const std::chrono::duration<Rep, Period>& wait, Token&& token) {
  return detail::initiate_multi_lock<void(std::error_code, std::optional<MultiLease>),
                                     detail::MultiLeaseIfValid>(std::forward<Token>(token), parts_,
                                                                detail::wait_ms(wait));
}

template <class Token>
auto MultiLease::async_release(Token&& token) {
  return asio::async_initiate<Token, void(std::error_code)>(
      [](auto handler, MultiLease* lease) {
        using H = std::decay_t<decltype(handler)>;
        auto receiver = std::make_unique<detail::ErrorReceiver<H>>(
            std::move(handler), detail::multi_lease_executor(*lease));
        detail::async_multi_release_impl(*lease, std::move(receiver));
      },
      token, this);
}

}  // namespace distlock
