#include "script/scripts.hpp"

#include "distlock_lua_sources.hpp"

namespace distlock::script {

const Scripts& scripts() {
  static const Scripts all{
      make_script("acquire", lua::acquire),
      make_script("release", lua::release),
      make_script("renew", lua::renew),
      make_script("force_release", lua::force_release),
      make_script("fenced_write", lua::fenced_write),
      make_script("fair_acquire", lua::fair_acquire),
      make_script("fair_release", lua::fair_release),
      make_script("rw_read_acquire", lua::rw_read_acquire),
      make_script("rw_write_acquire", lua::rw_write_acquire),
      make_script("rw_read_release", lua::rw_read_release),
      make_script("rw_write_release", lua::rw_write_release),
      make_script("simple_acquire", lua::simple_acquire),
      make_script("simple_release", lua::simple_release),
      make_script("latch_try_set_count", lua::latch_try_set_count),
      make_script("latch_count_down", lua::latch_count_down),
      make_script("latch_wait", lua::latch_wait),
      make_script("rate_limiter_set", lua::rate_limiter_set),
      make_script("rate_limiter_acquire", lua::rate_limiter_acquire),
      make_script("rate_limiter_available", lua::rate_limiter_available),
      make_script("semaphore_acquire", lua::semaphore_acquire),
      make_script("semaphore_release", lua::semaphore_release),
      make_script("semaphore_admin", lua::semaphore_admin),
  };
  return all;
}

std::vector<const Script*> all_scripts() {
  const Scripts& s = scripts();
  // One script per line, so adding one never conflicts with another.
  // clang-format off
  return {
      &s.acquire,
      &s.release,
      &s.renew,
      &s.force_release,
      &s.fenced_write,
      &s.fair_acquire,
      &s.fair_release,
      &s.rw_read_acquire,
      &s.rw_write_acquire,
      &s.rw_read_release,
      &s.rw_write_release,
      &s.simple_acquire,
      &s.simple_release,
      &s.latch_try_set_count,
      &s.latch_count_down,
      &s.latch_wait,
      &s.rate_limiter_set,
      &s.rate_limiter_acquire,
      &s.rate_limiter_available,
      &s.semaphore_acquire,
      &s.semaphore_release,
      &s.semaphore_admin,
  };
  // clang-format on
}

std::vector<std::vector<std::string>> preload_commands() {
  std::vector<std::vector<std::string>> commands;
  for (const Script* s : all_scripts()) {
    commands.push_back({"SCRIPT", "LOAD", std::string(s->source)});
  }
  return commands;
}

}  // namespace distlock::script
