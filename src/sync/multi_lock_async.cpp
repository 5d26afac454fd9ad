// MultiLock's async acquire: the parts taken one after the other in
// canonical order, each as Lock::async_acquire takes a handle-owned Lease,
// and everything taken given back (asynchronously, in reverse order) before
// an operation that did not get every part completes.
#include "distlock/multi_lock_async.hpp"

#include <algorithm>
#include <asio/error.hpp>
#include <asio/system_executor.hpp>
#include <cstdint>
#include <functional>
#include <mutex>

#include "distlock/error.hpp"
#include "sync/arguments.hpp"
#include "sync/async_wait.hpp"

namespace distlock::detail {

struct MultiLeaseAccess {
  static std::vector<Lease> take(MultiLease& lease) noexcept {
    std::vector<Lease> parts = std::move(lease.parts_);
    lease.parts_.clear();
    return parts;
  }
};

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Releases `leases` from the back to the front, one after the other, then
// calls done(first failure).
class ReleaseChain final : public std::enable_shared_from_this<ReleaseChain> {
 public:
  using Done = std::function<void(std::error_code)>;
  ReleaseChain(std::vector<Lease> leases, Done done)
      : leases_(std::move(leases)), done_(std::move(done)) {}

  void next() {
    if (leases_.empty()) return done_(first_);
    Lease last = std::move(leases_.back());
    leases_.pop_back();
    async_release_impl(last, std::make_unique<Step>(shared_from_this()));
  }

 private:
  struct Step final : Receiver<std::error_code> {
    explicit Step(std::shared_ptr<ReleaseChain> c) : chain(std::move(c)) {}
    void complete(std::error_code ec, std::error_code) override {
      if (ec && !chain->first_) chain->first_ = ec;
      chain->next();
    }
    std::shared_ptr<ReleaseChain> chain;
  };

  std::vector<Lease> leases_;
  Done done_;
  std::error_code first_;
};

void release_all(std::vector<Lease> leases, ReleaseChain::Done done) {
  std::make_shared<ReleaseChain>(std::move(leases), std::move(done))->next();
}

// One async_lock / async_try_lock_for. The steps run one at a time, each
// started by the completion of the one before (on the part's Client's I/O
// thread); cancel() may come from any thread, so what it reads is guarded.
class MultiAcquire final : public std::enable_shared_from_this<MultiAcquire> {
 public:
  MultiAcquire(std::shared_ptr<std::vector<Lock>> parts,
               std::optional<Clock::time_point> deadline,
               std::unique_ptr<Receiver<MultiLease>> receiver)
      : parts_(std::move(parts)), deadline_(deadline), receiver_(std::move(receiver)) {}

  // Takes the next part, or finishes once every part is taken.
  void next() {
    if (cancelled()) return give_back(make_error_code(asio::error::operation_aborted));
    if (taken_.size() == parts_->size()) return all_taken();
    std::uint64_t seq = 0;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      seq = ++started_;
    }
    auto op = async_acquire_impl((*parts_)[taken_.size()], left(),
                                 std::make_unique<PartDone>(shared_from_this(), seq));
    bool cancel_now = false;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      // The part may have completed (on its I/O thread) and the next one
      // started already: then this handle is stale and must not replace its.
      if (finished_ < seq) current_ = op;
      cancel_now = cancelled_;
    }
    // A cancel() that came before current_ was set did not reach this part.
    if (cancel_now) op->cancel();
  }

  void cancel() {
    std::shared_ptr<AsyncAcquire> current;
    {
      std::lock_guard<std::mutex> guard(mutex_);
      cancelled_ = true;
      current = current_;
    }
    if (current) current->cancel();
  }

 private:
  struct PartDone final : Receiver<Lease> {
    PartDone(std::shared_ptr<MultiAcquire> o, std::uint64_t s) : op(std::move(o)), seq(s) {}
    void complete(std::error_code ec, Lease lease) override {
      op->part_done(seq, ec, std::move(lease));
    }
    std::shared_ptr<MultiAcquire> op;
    std::uint64_t seq;
  };

  void part_done(std::uint64_t seq, std::error_code ec, Lease lease) {
    {
      std::lock_guard<std::mutex> guard(mutex_);
      current_.reset();
      finished_ = seq;
    }
    // An error, or not got in time (an empty Lease): nothing more is taken.
    if (ec || !lease.valid()) return give_back(ec);
    taken_.push_back(std::move(lease));
    next();
  }

  // Every part taken: done when every lease is still valid; otherwise (one
  // was lost while a later part was waited for) all go back and the parts
  // are taken again while the wait allows, as the blocking forms do.
  void all_taken() {
    const bool valid =
        std::all_of(taken_.begin(), taken_.end(), [](const Lease& l) { return l.valid(); });
    if (valid) return finish({}, MultiLease(std::move(taken_)));
    if (deadline_ && Clock::now() >= *deadline_) return give_back({});
    release_all(std::move(taken_), [self = shared_from_this()](std::error_code) { self->next(); });
  }

  // Releases what was taken, then completes with `ec` and nothing held.
  void give_back(std::error_code ec) {
    release_all(std::move(taken_),
                [self = shared_from_this(), ec](std::error_code) { self->finish(ec, {}); });
  }

  void finish(std::error_code ec, MultiLease lease) {
    auto receiver = std::move(receiver_);
    receiver->complete(ec, std::move(lease));
  }

  bool cancelled() {
    std::lock_guard<std::mutex> guard(mutex_);
    return cancelled_;
  }

  // What a part may wait: the time left until the common deadline, rounded
  // up, zero once it passed (one attempt).
  std::optional<milliseconds> left() const {
    if (!deadline_) return std::nullopt;
    const auto d = *deadline_ - Clock::now();
    return d.count() > 0 ? std::chrono::ceil<milliseconds>(d) : milliseconds(0);
  }

  std::shared_ptr<std::vector<Lock>> parts_;
  std::optional<Clock::time_point> deadline_;
  std::unique_ptr<Receiver<MultiLease>> receiver_;
  std::vector<Lease> taken_;
  std::mutex mutex_;
  // Guarded by mutex_: cancel() reads them from any thread.
  bool cancelled_ = false;
  std::shared_ptr<AsyncAcquire> current_;  // the part being taken
  std::uint64_t started_ = 0;              // part acquires started
  std::uint64_t finished_ = 0;             // the last part acquire completed
};

// The cancellation slot's handle: weak, as the slot may outlive the operation.
class MultiCancel final : public AsyncAcquire {
 public:
  explicit MultiCancel(std::weak_ptr<MultiAcquire> op) : op_(std::move(op)) {}
  void cancel() override {
    if (auto op = op_.lock()) op->cancel();
  }

 private:
  std::weak_ptr<MultiAcquire> op_;
};

}  // namespace

std::shared_ptr<AsyncAcquire> async_multi_lock_impl(
    const std::shared_ptr<std::vector<Lock>>& parts,
    std::optional<milliseconds> wait,
    std::unique_ptr<Receiver<MultiLease>> receiver) {
  if (wait && wait->count() < 0) {
    // As the blocking forms: a caller's mistake, reported before anything is sent.
    return sync::complete_at_once(std::move(receiver), make_error_code(errc::invalid_argument));
  }
  auto op = std::make_shared<MultiAcquire>(parts, sync::deadline_after(wait), std::move(receiver));
  op->next();
  return std::make_shared<MultiCancel>(op);
}

void async_multi_release_impl(MultiLease& lease,
                              std::unique_ptr<Receiver<std::error_code>> receiver) {
  std::vector<Lease> parts = MultiLeaseAccess::take(lease);
  if (parts.empty()) {
    sync::complete_at_once(std::move(receiver), {});
    return;
  }
  // Lease releases complete off the call, so the chain never runs the
  // receiver inside this call either.
  release_all(std::move(parts), [r = std::shared_ptr<Receiver<std::error_code>>(std::move(
                                     receiver))](std::error_code ec) { r->complete(ec, {}); });
}

asio::any_io_executor multi_lock_executor(const std::vector<Lock>& parts) {
  if (parts.empty()) return asio::system_executor();
  return client_executor(*Access::services(parts.front()));
}

asio::any_io_executor multi_lease_executor(const MultiLease& lease) {
  if (lease.parts().empty()) return asio::system_executor();
  return lease_executor(lease.parts().front());
}

}  // namespace distlock::detail
