#include "sync/latch_ops.hpp"

#include <atomic>

#include "distlock/error.hpp"
#include "distlock/latch.hpp"
#include "net/completion.hpp"
#include "runtime/executor.hpp"
#include "script/scripts.hpp"
#include "sync/acquire_op.hpp"
#include "sync/key_layout.hpp"
#include "sync/latch_recheck.hpp"
#include "sync/services.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {
namespace {

constexpr std::size_t kMaxName = 64 * 1024;

std::atomic<std::chrono::milliseconds::rep> recheck_ms{Latch::kRecheck.count()};

}  // namespace

std::chrono::milliseconds latch_recheck() noexcept {
  return std::chrono::milliseconds(recheck_ms.load());
}

void set_latch_recheck(std::chrono::milliseconds every) noexcept {
  recheck_ms.store(every.count());
}

void validate_sync_name(const std::string& name, std::string_view what) {
  if (name.empty()) throw Error(errc::invalid_argument, std::string(what) + " name is empty");
  if (name.size() > kMaxName) {
    throw Error(errc::invalid_argument, std::string(what) + " name is " +
                                            std::to_string(name.size()) +
                                            " bytes; at most 65536 are allowed");
  }
}

AcquireOutcome acquire_step_blocking(Services& client,
                                     std::unique_ptr<AcquireStep> step,
                                     std::optional<Clock::time_point> deadline) {
  AcquireOutcome result;
  if (!client.executor.may_block(result.ec)) {
    result.message = result.ec == errc::closed ? "the client is closed"
                                               : "a blocking wait on the client's I/O thread "
                                                 "would deadlock";
    return result;
  }
  net::Event done;
  auto op =
      std::make_shared<AcquireOp>(client, std::move(step), deadline, [&](AcquireOutcome outcome) {
        result = std::move(outcome);
        done.set();
      });
  op->start();
  done.wait();
  return result;
}

Value call_script_blocking(Services& client,
                           std::string_view route_key,
                           const script::Script& script,
                           std::span<const std::string_view> keys,
                           std::span<const std::string_view> args,
                           std::error_code& ec,
                           std::string& what) {
  ec.clear();
  if (!client.executor.may_block(ec)) {
    what = ec == errc::closed ? "the client is closed"
                              : "a blocking call on the client's I/O thread would deadlock";
    return Value();
  }
  net::SyncCompletion done;
  std::optional<script::ScriptCall> call;
  if ((ec = client.topology.call(call, route_key, script, keys, args, &done))) {
    what = "the call could not be queued";
    return Value();
  }
  Value reply = done.wait(ec);
  if (ec) {
    what = "no reply from the server";
    return Value();
  }
  if (reply.is_error()) {
    ec = errc::server_error;
    what = reply.as_string();
    return Value();
  }
  return reply;
}

LatchNames::LatchNames(std::string latch_name) : name(std::move(latch_name)) {
  validate_sync_name(name, "latch");
  channel = latch_channel(name);
}

LatchStep::LatchStep(std::shared_ptr<const LatchNames> names)
    : names_(std::move(names)), keys_{names_->name} {}

const script::Script& LatchStep::script() const {
  return script::scripts().latch_wait;
}

Attempt LatchStep::interpret(const Value& reply) const {
  if (!reply.is_integer()) {
    return Attempt::failed(errc::protocol_error,
                           "latch '" + names_->name + "' does not hold an integer count");
  }
  if (reply.as_integer() <= 0) return Attempt::acquired(std::nullopt);
  return Attempt::contended(std::nullopt);
}

std::chrono::milliseconds LatchStep::fallback() const {
  return latch_recheck();
}

}  // namespace distlock::sync
