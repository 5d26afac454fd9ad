// The Client's I/O thread as the parts see it: where to post work, whether
// the caller is on it, and whether a blocking call may proceed.
#pragma once

#include <asio/io_context.hpp>
#include <atomic>
#include <system_error>

namespace distlock::runtime {

class Executor {
 public:
  explicit Executor(asio::io_context& io) noexcept : io_(io) {}

  asio::io_context& io() const noexcept { return io_; }
  // True when called from the I/O thread (where blocking would deadlock).
  bool on_io_thread() const noexcept { return io_.get_executor().running_in_this_thread(); }
  bool closed() const noexcept { return closed_.load(); }
  // Marks the Client closed; true only for the first call.
  bool close() noexcept { return !closed_.exchange(true); }
  // Sets ec (closed, or invalid_argument on the I/O thread) when a blocking
  // call may not proceed.
  bool may_block(std::error_code& ec) const;

 private:
  asio::io_context& io_;
  std::atomic<bool> closed_{false};
};

}  // namespace distlock::runtime
