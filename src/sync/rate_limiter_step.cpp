#include "sync/rate_limiter_step.hpp"

#include "distlock/error.hpp"
#include "script/scripts.hpp"

namespace distlock::sync {

RateLimiterStep::RateLimiterStep(std::shared_ptr<const std::string> name,
                                 std::int64_t n,
                                 std::optional<Clock::time_point> deadline)
    : name_(std::move(name)),
      n_text_(std::to_string(n)),
      deadline_(deadline),
      keys_{*name_},
      args_{n_text_} {}

const script::Script& RateLimiterStep::script() const {
  return script::scripts().rate_limiter_acquire;
}

Attempt RateLimiterStep::interpret(const Value& reply) const {
  if (!reply.is_array() || reply.as_array().size() != 2 || !reply.as_array()[0].is_integer() ||
      !reply.as_array()[1].is_integer()) {
    return Attempt::failed(errc::protocol_error,
                           "rate limiter '" + *name_ + "': unexpected reply to an acquire");
  }
  const auto status = reply.as_array()[0].as_integer();
  const auto value = reply.as_array()[1].as_integer();
  switch (status) {
    case 1:
      return Attempt::acquired(std::nullopt);
    case 0: {
      const std::chrono::milliseconds wait(value);
      // The server's wait outlasts the caller's: give up now, nothing taken.
      if (deadline_ && Clock::now() + wait > *deadline_) return Attempt::failed({}, {});
      return Attempt::contended(wait);
    }
    case -1:
      return Attempt::failed(errc::invalid_argument,
                             "rate limiter '" + *name_ + "' has no rate set; call try_set_rate");
    case -2:
      return Attempt::failed(errc::invalid_argument,
                             "n = " + n_text_ + " is more than the rate of rate limiter '" +
                                 *name_ + "' (" + std::to_string(value) + " permits)");
    default:
      return Attempt::failed(errc::protocol_error,
                             "rate limiter '" + *name_ + "': unexpected reply to an acquire");
  }
}

}  // namespace distlock::sync
