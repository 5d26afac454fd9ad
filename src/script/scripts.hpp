// The Lua scripts distlock runs, built once from src/script/lua/*.lua.
#pragma once

#include "script/script.hpp"

namespace distlock::script {

struct Scripts {
  Script acquire;
  Script release;
  Script renew;
  Script force_release;
};

// Thread-safe; SHA1s are computed on first use.
const Scripts& scripts();

}  // namespace distlock::script
