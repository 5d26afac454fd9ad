// The Lua scripts distlock runs, built once from src/script/lua/*.lua.
#pragma once

#include <vector>

#include "script/script.hpp"

namespace distlock::script {

struct Scripts {
  Script acquire;
  Script release;
  Script renew;
  Script force_release;
  Script fenced_write;
  Script fair_acquire;
  Script fair_release;
  Script rw_read_acquire;
  Script rw_write_acquire;
  Script rw_read_release;
  Script rw_write_release;
  Script simple_acquire;
  Script simple_release;
  // The countdown latch and the rate limiter
  Script latch_try_set_count;
  Script latch_count_down;
  Script latch_wait;
  Script rate_limiter_set;
  Script rate_limiter_acquire;
  Script rate_limiter_available;
  Script semaphore_acquire;
  Script semaphore_release;
  Script semaphore_admin;
};

// Every script, for the connection handshake's SCRIPT LOAD.
std::vector<const Script*> all_scripts();

// The SCRIPT LOAD command of every script, for a data connection's
// handshake: a new primitive's scripts are preloaded by being listed in
// Scripts and all_scripts().
std::vector<std::vector<std::string>> preload_commands();

// Thread-safe; SHA1s are computed on first use.
const Scripts& scripts();

}  // namespace distlock::script
