#include "sync/lock_ops.hpp"

#include "client_impl.hpp"
#include "distlock/error.hpp"
#include "script/scripts.hpp"

namespace distlock::detail {
namespace {

constexpr std::string_view kUnlockMessage = "0";

// One release script call whose arguments live as long as it does.
class ReleaseCall final : public net::Completion {
 public:
  ReleaseCall(const LeaseState& state, std::uint32_t expected, net::Completion* next)
      : expected_(std::to_string(expected)), next_(next) {
    keys_[0] = state.keys->name;
    args_ = {state.ttl_text, state.owner, expected_, state.keys->channel, kUnlockMessage};
    name_ = state.keys->name;
  }

  std::error_code start(net::Connection& connection) {
    call_.emplace(connection, script::scripts().release, keys_, args_, this);
    return call_->start();
  }

  void complete(std::error_code ec, Value reply) override {
    if (next_ != nullptr) return next_->complete(ec, std::move(reply));
    delete this;  // detached
  }

 private:
  std::string expected_;
  std::string name_;
  std::array<std::string_view, 1> keys_;
  std::array<std::string_view, 5> args_;
  std::optional<script::ScriptCall> call_;
  net::Completion* next_;
};

ReleaseResult to_result(const Value& reply, std::error_code& ec) {
  if (reply.is_error()) {
    ec = errc::server_error;
    return ReleaseResult::not_held;
  }
  if (!reply.is_integer()) {
    ec = errc::protocol_error;
    return ReleaseResult::not_held;
  }
  switch (reply.as_integer()) {
    case 0:
      return ReleaseResult::decremented;
    case 1:
      return ReleaseResult::released;
    case 2:
      return ReleaseResult::already_applied;
    default:
      return ReleaseResult::not_held;
  }
}

}  // namespace

std::shared_ptr<LeaseState> make_lease_state(const std::shared_ptr<ClientImpl>& client,
                                             const std::shared_ptr<const LockKeys>& keys,
                                             std::string owner,
                                             std::optional<std::chrono::milliseconds> lease) {
  const auto ttl = lease.value_or(client->options().watchdog_timeout);
  return std::make_shared<LeaseState>(client, keys, std::move(owner), ttl, !lease.has_value());
}

AcquireOutcome acquire_blocking(ClientImpl& client,
                                const std::shared_ptr<LeaseState>& state,
                                std::uint32_t count_after,
                                std::optional<Clock::time_point> deadline) {
  AcquireOutcome result;
  if (!client.may_block(result.ec)) {
    result.message = result.ec == errc::closed ? "the client is closed"
                                               : "a blocking lock call on the client's I/O thread "
                                                 "would deadlock; use async_acquire there";
    return result;
  }
  const bool fresh = !state->active.load();
  if (fresh) client.watchdog().add(state);
  net::Event done;
  auto op = std::make_shared<AcquireOp>(client, state, count_after, deadline,
                                        [&](AcquireOutcome outcome) {
                                          result = std::move(outcome);
                                          done.set();
                                        });
  op->start();
  done.wait();
  if (fresh && !result.acquired) client.watchdog().remove(state.get());
  return result;
}

ReleaseResult release_blocking(ClientImpl& client,
                               const LeaseState& state,
                               std::uint32_t expected,
                               std::error_code& ec) {
  for (int attempt = 0;; ++attempt) {
    ec.clear();
    if (!client.may_block(ec)) return ReleaseResult::not_held;
    net::SyncCompletion done;
    ReleaseCall call(state, expected, &done);
    if ((ec = call.start(client.topology().data_for(state.keys->name)))) {
      return ReleaseResult::not_held;
    }
    Value reply = done.wait(ec);
    // The same call again is harmless (expected count), so a lost reply is
    // retried once; the retry waits for the reconnect within its timeout.
    if (ec == errc::connection_lost && attempt == 0) continue;
    if (ec) return ReleaseResult::not_held;
    return to_result(reply, ec);
  }
}

void release_detached(ClientImpl& client, const LeaseState& state, std::uint32_t expected) {
  auto* call = new ReleaseCall(state, expected, nullptr);
  if (call->start(client.topology().data_for(state.keys->name))) delete call;
}

}  // namespace distlock::detail
