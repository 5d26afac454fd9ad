#include "backend/engine_kit.hpp"

#include <asio/error.hpp>
#include <asio/post.hpp>
#include <asio/system_executor.hpp>

#include "distlock/error.hpp"
#include "runtime/identity.hpp"

namespace distlock::backend::kit {

void Holding::release_foreign(std::error_code& ec) noexcept {
  ec.clear();
  if (released.exchange(true)) return;
  if (backend_closed() || executor_.closed()) {
    ec = errc::closed;  // the session or connection ended with the Client
    return;
  }
  auto me = self.lock();
  if (executor_.on_io_thread()) {
    me->release_on_io([](std::error_code) {});
    return;
  }
  auto promise = std::make_shared<std::promise<std::error_code>>();
  auto future = promise->get_future();
  asio::post(executor_.io(), [me, promise] {
    me->release_on_io([promise](std::error_code e) { promise->set_value(e); });
  });
  ec = wait_for(executor_, future, std::error_code(errc::closed));
}

void Holding::release_foreign_async(std::function<void(std::error_code)> done) noexcept {
  auto me = self.lock();
  if (released.exchange(true)) {
    asio::post(executor_.io(), [done = std::move(done)] { done({}); });
    return;
  }
  if (backend_closed() || executor_.closed()) {
    asio::post(asio::system_executor(), [done = std::move(done)] { done(errc::closed); });
    return;
  }
  asio::post(executor_.io(),
             [me, done = std::move(done)]() mutable { me->release_on_io(std::move(done)); });
}

asio::any_io_executor Holding::foreign_executor() const {
  return executor_.io().get_executor();
}

std::shared_ptr<Holding> ThreadHolds::reenter(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = holds_.find(std::make_pair(key, std::this_thread::get_id()));
  if (it == holds_.end()) return nullptr;
  if (it->second.holding->lost()) {
    holds_.erase(it);  // a lost holding: the caller takes a new one
    return nullptr;
  }
  ++it->second.count;
  return it->second.holding;
}

void ThreadHolds::add(const std::string& key, std::shared_ptr<Holding> holding) {
  std::lock_guard lock(mutex_);
  holds_[std::make_pair(key, std::this_thread::get_id())] = Hold{std::move(holding), 1};
}

std::error_code ThreadHolds::unlock(const std::string& key) noexcept {
  std::shared_ptr<Holding> last;
  bool lost = false;
  {
    std::lock_guard lock(mutex_);
    auto it = holds_.find(std::make_pair(key, std::this_thread::get_id()));
    if (it == holds_.end()) return errc::not_owner;
    lost = it->second.holding->lost();
    if (!lost && --it->second.count > 0) return {};
    last = std::move(it->second.holding);
    holds_.erase(it);
  }
  std::error_code ec;
  last->release_foreign(ec);
  return lost ? std::error_code(errc::lease_lost) : ec;
}

std::pair<std::shared_ptr<Holding>, std::uint32_t> ThreadHolds::find(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = holds_.find(std::make_pair(key, std::this_thread::get_id()));
  if (it == holds_.end()) return {nullptr, 0};
  return {it->second.holding, it->second.count};
}

void ThreadHolds::clear() {
  std::lock_guard lock(mutex_);
  holds_.clear();
}

Got Engine::acquire_blocking(std::string owner, std::optional<milliseconds> wait) {
  std::error_code ec;
  if (!executor_.may_block(ec)) {
    return {ec,
            ec == errc::closed ? "the client was closed"
                               : "a blocking lock call on the client's I/O thread would deadlock; "
                                 "use async_acquire there",
            nullptr};
  }
  std::optional<Clock::time_point> deadline;
  if (wait) deadline = Clock::now() + *wait;
  auto promise = std::make_shared<std::promise<Got>>();
  auto future = promise->get_future();
  auto op = attempt({client_, name_, std::move(owner), fenced_, deadline,
                     [promise](Got g) { promise->set_value(std::move(g)); }});
  asio::post(executor_.io(), [op] { op->start(); });
  return wait_for(executor_, future, Got{errc::closed, "the client was closed", nullptr});
}

sync::AcquireOutcome Engine::lock_for_thread(std::optional<milliseconds> wait,
                                             std::optional<milliseconds> lease) {
  sync::AcquireOutcome out;
  if (lease) {
    out.ec = errc::not_supported;
    out.message = lease_refusal();
    return out;
  }
  if (auto held = holds_.reenter(key_)) {
    out.acquired = true;  // reentry: counted in this process
    out.token = held->fencing_token;
    return out;
  }
  Got got = acquire_blocking(runtime::thread_owner(client_id_), wait);
  out.ec = got.ec;
  out.message = std::move(got.message);
  if (!got.holding) return out;
  out.acquired = true;
  out.token = got.holding->fencing_token;
  holds_.add(key_, std::move(got.holding));
  return out;
}

std::optional<Lease> Engine::acquire_lease(std::optional<milliseconds> wait,
                                           std::optional<milliseconds> lease,
                                           std::error_code& ec,
                                           std::string& message) {
  if (lease) {
    ec = errc::not_supported;
    message = lease_refusal();
    return std::nullopt;
  }
  Got got = acquire_blocking(client_id_ + ":" + runtime::random_token(), wait);
  ec = got.ec;
  message = std::move(got.message);
  if (!got.holding) return std::nullopt;
  return detail::Access::lease(std::move(got.holding));
}

namespace {

// The async acquire's cancel handle.
class Cancel final : public detail::AsyncAcquire {
 public:
  explicit Cancel(std::weak_ptr<Attempt> op) : op_(std::move(op)) {}
  void cancel() override {
    if (auto op = op_.lock()) op->cancel();
  }

 private:
  std::weak_ptr<Attempt> op_;
};

}  // namespace

std::shared_ptr<detail::AsyncAcquire> Engine::async_acquire(
    std::optional<milliseconds> wait, std::unique_ptr<detail::Receiver<Lease>> receiver) {
  std::shared_ptr<detail::Receiver<Lease>> r = std::move(receiver);
  if (wait && wait->count() < 0) {
    asio::post(asio::system_executor(), [r] { r->complete(errc::invalid_argument, Lease()); });
    return std::make_shared<Cancel>(std::weak_ptr<Attempt>());
  }
  std::optional<Clock::time_point> deadline;
  if (wait) deadline = Clock::now() + *wait;
  auto done = [r](Got g) {
    if (g.holding) return r->complete({}, detail::Access::lease(std::move(g.holding)));
    // cancelled: asio's operation_aborted, as the Redis form reports it
    if (g.ec == std::errc::operation_canceled) {
      return r->complete(asio::error::operation_aborted, Lease());
    }
    r->complete(g.ec, Lease());
  };
  auto op = attempt(
      {client_, name_, client_id_ + ":" + runtime::random_token(), fenced_, deadline, done});
  asio::post(executor_.io(), [op] { op->start(); });
  return std::make_shared<Cancel>(op);
}

}  // namespace distlock::backend::kit
