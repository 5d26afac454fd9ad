// Latch: try_set_count / count_down are one script each; the waits run the
// shared AcquireLoop with LatchStep (read the count, join the channel,
// re-read on every message).
#include "distlock/latch.hpp"

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "sync/arguments.hpp"
#include "sync/blocking_call.hpp"
#include "sync/latch_step.hpp"
#include "sync/services.hpp"

namespace distlock {
using sync::throw_if;

Latch::Latch(std::shared_ptr<sync::Services> client, std::string name)
    : client_(std::move(client)),
      names_(std::make_shared<const sync::LatchNames>(std::move(name))) {}

const std::string& Latch::name() const noexcept {
  return names_->name;
}

namespace {

bool set_count(sync::Services& client,
               const sync::LatchNames& names,
               std::int64_t count,
               std::error_code& ec,
               std::string& what) {
  const std::string text = std::to_string(count);
  const auto keys = names.keys();
  const std::string_view args[] = {text};
  const Value v = sync::call_script_blocking(
      client, names.name, script::scripts().latch_try_set_count, keys, args, ec, what);
  return !ec && v.is_integer() && v.as_integer() == 1;
}

std::int64_t read_count(sync::Services& client,
                        const sync::LatchNames& names,
                        std::error_code& ec,
                        std::string& what) {
  const std::string_view keys[] = {names.name};
  const Value v = sync::call_script_blocking(client, names.name, script::scripts().latch_wait, keys,
                                             {}, ec, what);
  if (ec) return 0;
  if (!v.is_integer()) {
    ec = errc::protocol_error;
    what = "the latch does not hold an integer count";
    return 0;
  }
  return v.as_integer() < 0 ? 0 : v.as_integer();
}

void count_down_call(sync::Services& client,
                     const sync::LatchNames& names,
                     std::error_code& ec,
                     std::string& what) {
  const auto keys = names.keys();
  sync::call_script_blocking(client, names.name, script::scripts().latch_count_down, keys, {}, ec,
                             what);
}

}  // namespace

bool Latch::try_set_count(std::int64_t count, std::error_code& ec) {
  ec.clear();
  if (count < 0) {
    ec = errc::invalid_argument;
    return false;
  }
  std::string what;
  return set_count(*client_, *names_, count, ec, what);
}

bool Latch::try_set_count(std::int64_t count) {
  if (count < 0) {
    throw Error(errc::invalid_argument,
                "latch count is " + std::to_string(count) + "; it must be >= 0");
  }
  std::error_code ec;
  std::string what;
  const bool set = set_count(*client_, *names_, count, ec, what);
  throw_if(ec, "try_set_count of latch '" + names_->name + "': " + what);
  return set;
}

void Latch::count_down(std::error_code& ec) {
  std::string what;
  count_down_call(*client_, *names_, ec, what);
}

void Latch::count_down() {
  std::error_code ec;
  std::string what;
  count_down_call(*client_, *names_, ec, what);
  throw_if(ec, "count_down of latch '" + names_->name + "': " + what);
}

std::int64_t Latch::count(std::error_code& ec) const {
  std::string what;
  return read_count(*client_, *names_, ec, what);
}

std::int64_t Latch::count() const {
  std::error_code ec;
  std::string what;
  const auto n = read_count(*client_, *names_, ec, what);
  throw_if(ec, "count of latch '" + names_->name + "': " + what);
  return n;
}

namespace {

sync::AcquireOutcome run_wait(sync::Services& client,
                              const std::shared_ptr<const sync::LatchNames>& names,
                              std::optional<sync::Clock::time_point> deadline) {
  return sync::acquire_step_blocking(client, std::make_unique<sync::LatchStep>(names), deadline);
}

}  // namespace

void Latch::wait(std::error_code& ec) {
  ec = run_wait(*client_, names_, std::nullopt).ec;
}

void Latch::wait() {
  const auto outcome = run_wait(*client_, names_, std::nullopt);
  throw_if(outcome.ec, outcome.message);
}

bool Latch::wait_until(std::chrono::steady_clock::time_point deadline, std::error_code& ec) {
  const auto outcome = run_wait(*client_, names_, deadline);
  ec = outcome.ec;
  return !ec && outcome.acquired;
}

bool Latch::wait_until(std::chrono::steady_clock::time_point deadline) {
  const auto outcome = run_wait(*client_, names_, deadline);
  throw_if(outcome.ec, outcome.message);
  return outcome.acquired;
}

bool Latch::wait_for_ms(std::chrono::milliseconds wait, std::error_code& ec) {
  if (sync::rejected(wait, std::nullopt, ec)) return false;
  // No deadline for a wait too long for the clock (milliseconds::max()).
  const auto outcome = run_wait(*client_, names_, sync::deadline_after(wait));
  ec = outcome.ec;
  return !ec && outcome.acquired;
}

bool Latch::wait_for_ms(std::chrono::milliseconds wait) {
  sync::check_wait(wait, "latch '" + names_->name + "': ");
  const auto outcome = run_wait(*client_, names_, sync::deadline_after(wait));
  throw_if(outcome.ec, outcome.message);
  return outcome.acquired;
}

Latch Client::latch(std::string name) {
  if (!impl_) throw Error(errc::closed, "the client was moved from");
  return Latch(sync::services_for(impl_, "latch"), std::move(name));
}

}  // namespace distlock
