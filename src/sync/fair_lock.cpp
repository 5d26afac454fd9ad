#include "sync/fair_lock.hpp"

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "distlock/lock.hpp"
#include "script/scripts.hpp"
#include "sync/arguments.hpp"
#include "sync/fair_lock_step.hpp"
#include "sync/key_layout.hpp"

namespace distlock::sync {

FairPrimitive::FairPrimitive(std::string lock_name,
                             bool fenced,
                             std::chrono::milliseconds lock_delay)
    : Primitive(std::move(lock_name), "fair lock"),
      queue(fair_queue_key(name)),
      timeout(fair_timeout_key(name)),
      channel_prefix(lock_channel(name)),
      delay(name, lock_delay) {
  if (fenced) fence = fencing_counter_key(name);
}

std::string FairPrimitive::waiter_channel(const std::string& owner) const {
  return channel_prefix + ":" + owner;
}

void FairPrimitive::keys(ReleaseArgs& out) const {
  out.key(name);
  out.key(queue);
  out.key(timeout);
  if (delay.on()) out.key(delay.key);
  if (!fence.empty()) out.key(fence);
}

std::unique_ptr<HoldingStep> FairPrimitive::acquire_step(Services& client,
                                                         std::shared_ptr<Holding> state,
                                                         std::uint32_t count_after) const {
  return std::make_unique<FairStep>(client, *this, std::move(state), count_after);
}

runtime::Renewal FairPrimitive::renewal(const std::string& owner) const {
  if (delay.on()) {
    return {runtime::Renewal::Kind::hash_field_delayed, name, owner, delay.key};
  }
  return {runtime::Renewal::Kind::hash_field, name, owner, {}};
}

const script::Script& FairPrimitive::release_script() const {
  return script::scripts().fair_release;
}

void FairPrimitive::release_args(const Holding& state,
                                 std::string_view expected,
                                 ReleaseArgs& out) const {
  keys(out);
  out.arg(state.ttl_text);
  out.arg(state.owner);
  out.arg(expected);
  out.arg(channel_prefix);
  out.arg("r");
  if (delay.on()) out.arg("d");  // KEYS[4] is the marker
}

bool FairPrimitive::force_release(const Services& client,
                                  std::error_code& ec,
                                  std::string& what) const {
  ReleaseArgs args;
  keys(args);
  const std::string_view argv[] = {"0", "", "0", channel_prefix, "f"};
  for (std::string_view a : argv) args.arg(a);
  if (delay.on()) args.arg("d");
  return force_release_call(client, release_script(), args.key_span(), args.arg_span(), ec, what);
}

}  // namespace distlock::sync

namespace distlock {

Lock Client::fair_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return detail::Access::lock(sync::services_for(impl_, "fair lock"),
                              std::make_shared<const sync::FairPrimitive>(std::move(name), false));
}

Lock Client::fenced_fair_lock(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return detail::Access::lock(sync::services_for(impl_, "fair lock"),
                              std::make_shared<const sync::FairPrimitive>(std::move(name), true));
}

Lock Client::fair_lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return detail::Access::lock(sync::services_for(impl_, "fair lock"),
                              std::make_shared<const sync::FairPrimitive>(
                                  std::move(name), false, sync::checked_lock_delay(options)));
}

Lock Client::fenced_fair_lock(std::string name, const LockOptions& options) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return detail::Access::lock(sync::services_for(impl_, "fair lock"),
                              std::make_shared<const sync::FairPrimitive>(
                                  std::move(name), true, sync::checked_lock_delay(options)));
}

}  // namespace distlock
