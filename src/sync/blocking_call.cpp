#include "sync/blocking_call.hpp"

#include "distlock/error.hpp"
#include "net/completion.hpp"
#include "runtime/executor.hpp"
#include "script/script.hpp"
#include "sync/acquire_op.hpp"
#include "sync/services.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {

bool may_block(const Services& client,
               std::error_code& ec,
               std::string& what,
               std::string_view on_io_thread) {
  if (client.executor.may_block(ec)) return true;
  what = ec == errc::closed ? std::string("the client is closed") : std::string(on_io_thread);
  return false;
}

AcquireOutcome acquire_step_blocking(Services& client,
                                     std::unique_ptr<AcquireStep> step,
                                     std::optional<Clock::time_point> deadline,
                                     const std::function<void()>& finished) {
  AcquireOutcome result;
  if (!may_block(client, result.ec, result.message)) return result;
  net::Event done;
  auto op =
      std::make_shared<AcquireOp>(client, std::move(step), deadline, [&](AcquireOutcome outcome) {
        result = std::move(outcome);
        done.set();
      });
  op->start();
  done.wait();
  if (finished) finished();
  return result;
}

Value call_script_blocking(const Services& client,
                           std::string_view route_key,
                           const script::Script& script,
                           std::span<const std::string_view> keys,
                           std::span<const std::string_view> args,
                           std::error_code& ec,
                           std::string& what) {
  ec.clear();
  if (!may_block(client, ec, what)) return Value();
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

}  // namespace distlock::sync
