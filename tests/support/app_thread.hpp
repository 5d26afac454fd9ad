// An io_context run by its own thread: an application's executor, for tests
// of the async forms whose handlers run there.
#pragma once

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <thread>

namespace distlock::test {

class AppThread {
 public:
  AppThread() : work_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
  ~AppThread() {
    io_.stop();  // a handler that never ran must not hang the test
    thread_.join();
  }
  AppThread(const AppThread&) = delete;
  AppThread& operator=(const AppThread&) = delete;
  asio::io_context& io() { return io_; }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace distlock::test
