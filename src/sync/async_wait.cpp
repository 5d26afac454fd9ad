#include "sync/async_wait.hpp"

#include <asio/error.hpp>

#include "sync/services.hpp"

namespace distlock::sync {
namespace {

class CancelHandle final : public detail::AsyncAcquire {
 public:
  explicit CancelHandle(std::weak_ptr<AcquireOp> op) : op_(std::move(op)) {}
  void cancel() override {
    if (auto op = op_.lock()) op->abort(make_error_code(asio::error::operation_aborted));
  }

 private:
  std::weak_ptr<AcquireOp> op_;
};

}  // namespace

std::shared_ptr<detail::AsyncAcquire> cancel_handle(std::weak_ptr<AcquireOp> op) {
  return std::make_shared<CancelHandle>(std::move(op));
}

std::shared_ptr<detail::AsyncAcquire> start_async_step(
    const std::shared_ptr<Services>& services,
    std::unique_ptr<AcquireStep> step,
    std::optional<Clock::time_point> deadline,
    std::unique_ptr<detail::Receiver<bool>> receiver) {
  auto op = std::make_shared<AcquireOp>(
      *services, std::move(step), deadline,
      // std::function needs a copyable callable: the receiver is shared.
      [services, r = std::shared_ptr<detail::Receiver<bool>>(std::move(receiver))](
          AcquireOutcome o) { r->complete(o.ec, !o.ec && o.acquired); });
  op->start();
  return cancel_handle(op);
}

}  // namespace distlock::sync
