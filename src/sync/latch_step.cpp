#include "sync/latch_step.hpp"

#include <atomic>

#include "distlock/error.hpp"
#include "distlock/latch.hpp"
#include "script/scripts.hpp"
#include "sync/arguments.hpp"
#include "sync/key_layout.hpp"
#include "sync/latch_recheck.hpp"

namespace distlock::sync {
namespace {

std::atomic<std::chrono::milliseconds::rep> recheck_ms{Latch::kRecheck.count()};

}  // namespace

std::chrono::milliseconds latch_recheck() noexcept {
  return std::chrono::milliseconds(recheck_ms.load());
}

void set_latch_recheck(std::chrono::milliseconds every) noexcept {
  recheck_ms.store(every.count());
}

LatchNames::LatchNames(std::string latch_name) : name(std::move(latch_name)) {
  validate_name(name, "latch");
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
