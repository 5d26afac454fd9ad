#include "sync/permit_primitive.hpp"

#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/blocking_call.hpp"
#include "sync/holding.hpp"
#include "sync/key_layout.hpp"
#include "sync/permit_step.hpp"

namespace distlock::sync {
namespace {

// One script call on the semaphore's keys, blocking: an integer reply, or ec.
std::int64_t script_call(Services& client,
                         const PermitPrimitive& semaphore,
                         const script::Script& script,
                         std::span<const std::string_view> keys,
                         std::span<const std::string_view> args,
                         std::error_code& ec) {
  std::string what;
  const Value reply =
      call_script_blocking(client, semaphore.route_key(), script, keys, args, ec, what);
  if (ec) return 0;
  if (!reply.is_integer()) {
    ec = errc::protocol_error;
    return 0;
  }
  return reply.as_integer();
}

}  // namespace

PermitPrimitive::PermitPrimitive(std::string semaphore_name, Holder h)
    : Primitive(std::move(semaphore_name), "semaphore"),
      holders(semaphore_holders_key(name)),
      counts(semaphore_counts_key(name)),
      v1_leases(semaphore_v1_leases_key(name)),
      v1_holders(semaphore_v1_holders_key(name)),
      channel(semaphore_channel(name)),
      holder(h) {}

void PermitPrimitive::keys(ReleaseArgs& out) const {
  out.key(name);
  out.key(holders);
  out.key(counts);
}

std::unique_ptr<HoldingStep> PermitPrimitive::acquire_step(Services& client,
                                                           std::shared_ptr<Holding> state,
                                                           std::uint32_t count_after) const {
  return std::make_unique<PermitStep>(client, *this, std::move(state), count_after);
}

runtime::Renewal PermitPrimitive::renewal(const std::string& owner) const {
  return {runtime::Renewal::Kind::permit_holder, holders, owner, {}};
}

const script::Script& PermitPrimitive::release_script() const {
  return script::scripts().semaphore_release;
}

void PermitPrimitive::release_args(const Holding& state,
                                   std::string_view expected,
                                   ReleaseArgs& out) const {
  const auto [n, retire] = release_count(expected);
  keys(out);
  out.arg(state.owner);
  out.arg(n);
  out.arg(retire);
  out.arg(channel);
}

std::pair<std::string_view, std::string_view> PermitPrimitive::release_count(
    std::string_view expected) const {
  if (holder == Holder::permit || expected == "0") return {"0", "1"};
  return {expected, "0"};
}

Value PermitPrimitive::release_reply(Value reply) const {
  if (!reply.is_integer()) return reply;
  const std::int64_t r = reply.as_integer();
  if (r >= 1) return Value::integer(1);   // released
  if (r == -2) return Value::integer(2);  // a count other than asked
  return reply;                           // -1: not held
}

std::int64_t PermitPrimitive::give_back(Services& client,
                                        const Holding& state,
                                        std::int64_t n,
                                        bool retire,
                                        std::error_code& ec) const {
  const std::string count = std::to_string(n);
  const std::string_view args[] = {state.owner, count, retire ? "1" : "0", channel};
  ReleaseArgs k;
  keys(k);
  return script_call(client, *this, release_script(), k.key_span(), args, ec);
}

std::int64_t PermitPrimitive::admin(Services& client,
                                    std::string_view op,
                                    std::int64_t value,
                                    std::error_code& ec) const {
  const std::string v = std::to_string(value);
  const std::string_view args[] = {op, v, channel};
  const auto k = reclaim_keys();
  return script_call(client, *this, script::scripts().semaphore_admin, k, args, ec);
}

}  // namespace distlock::sync
