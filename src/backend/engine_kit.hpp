// What every backend beyond Redis shares behind the LockEngine seam
// (lock_engine.hpp): a backend writes how one acquire runs on the I/O
// thread (an Attempt) and how one holding is released there (a Holding);
// the kit gives it the rest of the Lock: the threads' reentrant holds, the
// blocking and async acquire forms, Leases, and the waits for the I/O
// thread that end when the Client closes.
#pragma once

#include <asio/any_io_executor.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "backend/lock_engine.hpp"
#include "runtime/executor.hpp"
#include "runtime/lease_state.hpp"

namespace distlock::backend::kit {

using Clock = std::chrono::steady_clock;

// Waits for `future`, whose value the I/O thread sets. The Client's closing
// may stop the I/O thread before a posted call ran, so a stopped I/O thread
// ends the wait with `stopped`.
template <class T>
T wait_for(runtime::Executor& executor, std::future<T>& future, T stopped) {
  while (future.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (executor.io().stopped()) return stopped;
  }
  return future.get();
}

// Runs `start` on the I/O thread and waits for the value it hands its
// callback; `stopped` when the Client is closed (ec closed) or this is the
// I/O thread itself (ec set by may_block).
template <class T>
T blocking(runtime::Executor& executor,
           std::function<void(std::function<void(T)>)> start,
           T stopped,
           std::error_code& ec) {
  ec.clear();
  if (!executor.may_block(ec)) return stopped;
  auto promise = std::make_shared<std::promise<T>>();
  auto future = promise->get_future();
  asio::post(executor.io(), [start = std::move(start), promise] {
    start([promise](T value) { promise->set_value(std::move(value)); });
  });
  return wait_for(executor, future, std::move(stopped));
}

// One holding of a backend: a LeaseState that releases itself through
// release_on_io, on the I/O thread, so Lease and the thread holds work
// unchanged.
class Holding : public runtime::LeaseState {
 public:
  Holding(runtime::Executor& executor,
          std::shared_ptr<void> client,
          std::string name_of,
          std::string owner_of,
          std::chrono::milliseconds ttl_of,
          const LostHandler* on_lost)
      : LeaseState(std::move(name_of),
                   std::move(owner_of),
                   ttl_of,
                   false,
                   runtime::Renewal{},
                   0.0,
                   on_lost),
        executor_(executor),
        client_(std::move(client)) {}

  bool foreign() const noexcept final { return true; }
  void release_foreign(std::error_code& ec) noexcept final;
  void release_foreign_async(std::function<void(std::error_code)> done) noexcept final;
  asio::any_io_executor foreign_executor() const final;

  std::weak_ptr<Holding> self;  // set by its maker

 protected:
  // I/O thread, once: ends the holding on the server; `done` gets what
  // release(ec) reports (lease_lost when it was lost).
  virtual void release_on_io(std::function<void(std::error_code)> done) = 0;
  // True once the backend was closed: its holdings ended with it.
  virtual bool backend_closed() const noexcept = 0;

  runtime::Executor& executor_;

 private:
  const std::shared_ptr<void> client_;  // keeps the ClientImpl (its I/O thread) alive
};

// What an acquire ends with.
struct Got {
  std::error_code ec;
  std::string message;
  std::shared_ptr<Holding> holding;  // acquired
};

// One acquire, made on any thread without I/O and started on the I/O
// thread; it ends by calling its done (a Got) once, on the I/O thread:
// acquired, not acquired in time (no ec), cancelled
// (std::errc::operation_canceled) or failed.
class Attempt {
 public:
  // Who asks for the lock, until when, and whom to tell.
  struct Request {
    std::shared_ptr<void> client;  // kept alive by the attempt and its holding
    std::string name;
    std::string owner;
    bool fenced = false;
    std::optional<Clock::time_point> deadline;  // none: as long as it takes
    std::function<void(Got)> done;
  };

  Attempt(Request request, asio::io_context& io)
      : client_(std::move(request.client)),
        name_(std::move(request.name)),
        owner_(std::move(request.owner)),
        fenced_(request.fenced),
        deadline_(request.deadline),
        timer_(io),
        done_(std::move(request.done)) {}
  virtual ~Attempt() = default;
  Attempt(const Attempt&) = delete;
  Attempt& operator=(const Attempt&) = delete;

  virtual void start() = 0;   // I/O thread
  virtual void cancel() = 0;  // any thread

 protected:
  // I/O thread: ends the attempt with `got`, once: stops its timer, has the
  // backend forget it, and calls done.
  void end(Got got) {
    if (finished_) return;
    finished_ = true;
    timer_.cancel();
    forget();
    auto done = std::move(done_);
    done(std::move(got));
  }
  // The backend's list of attempts in progress drops this one.
  virtual void forget() = 0;

  const std::shared_ptr<void> client_;
  const std::string name_;
  const std::string owner_;
  const bool fenced_;
  const std::optional<Clock::time_point> deadline_;
  asio::steady_timer timer_;  // the wait's end, and what else the attempt times
  std::function<void(Got)> done_;
  bool finished_ = false;
};

// The threads' reentrant holds of one Client: (lock key, thread) -> the
// holding and its count. Any thread.
class ThreadHolds {
 public:
  // The calling thread's live holding of `key`, its count raised by one;
  // null (and a lost one forgotten) when it holds none.
  std::shared_ptr<Holding> reenter(const std::string& key);
  void add(const std::string& key, std::shared_ptr<Holding> holding);
  // As Lock::unlock(ec): the last count releases.
  std::error_code unlock(const std::string& key) noexcept;
  // The calling thread's holding of `key` and its count; {null, 0} when none.
  std::pair<std::shared_ptr<Holding>, std::uint32_t> find(const std::string& key) const;
  // Forgets every hold (they keep the Client alive otherwise).
  void clear();

 private:
  struct Hold {
    std::shared_ptr<Holding> holding;
    std::uint32_t count = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::thread::id>, Hold> holds_;
};

// The Lock members every kit backend shares. A backend derives its engine
// and writes how an Attempt is made, and the queries.
class Engine : public LockEngine {
 public:
  Engine(runtime::Executor& executor,
         ThreadHolds& holds,
         std::shared_ptr<void> client,
         std::string name,
         std::string key,
         bool fenced,
         std::string client_id)
      : executor_(executor),
        holds_(holds),
        client_(std::move(client)),
        name_(std::move(name)),
        key_(std::move(key)),
        fenced_(fenced),
        client_id_(std::move(client_id)) {}

  const std::string& name() const noexcept override { return name_; }
  bool fenced() const noexcept override { return fenced_; }

  sync::AcquireOutcome lock_for_thread(std::optional<milliseconds> wait,
                                       std::optional<milliseconds> lease) override;
  std::error_code unlock_for_thread() noexcept override { return holds_.unlock(key_); }
  std::shared_ptr<runtime::LeaseState> thread_holding() const override {
    return holds_.find(key_).first;
  }
  std::optional<Lease> acquire_lease(std::optional<milliseconds> wait,
                                     std::optional<milliseconds> lease,
                                     std::error_code& ec,
                                     std::string& message) override;
  std::shared_ptr<detail::AsyncAcquire> async_acquire(
      std::optional<milliseconds> wait, std::unique_ptr<detail::Receiver<Lease>> receiver) override;
  asio::any_io_executor executor() const override { return executor_.io().get_executor(); }

 protected:
  // An acquire for `owner` that gives up at `deadline` (none: waits as long
  // as it takes). Any thread, no I/O.
  virtual std::shared_ptr<Attempt> attempt(Attempt::Request request) = 0;
  // The message refusing a fixed lease (not_supported): a kit backend holds
  // for as long as its session or connection lives.
  virtual std::string lease_refusal() const = 0;

  runtime::Executor& executor_;
  ThreadHolds& holds_;
  const std::shared_ptr<void> client_;
  const std::string name_;
  const std::string key_;  // the thread holds' key: one per lock on the server
  const bool fenced_;
  const std::string client_id_;

 private:
  // Runs an attempt and waits for it.
  Got acquire_blocking(std::string owner, std::optional<milliseconds> wait);
};

}  // namespace distlock::backend::kit
