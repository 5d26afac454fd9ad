// The Lua scripts distlock runs, built once from src/script/lua/*.lua.
#pragma once

#include <string>
#include <vector>

#include "script/script.hpp"

namespace distlock::script {

// One member per src/script/lua/<name>.lua, named <name> (scripts().acquire,
// scripts().fair_release, ...). The members come from the list the build
// generates from the Lua files (cmake/embed_lua.cmake), so adding a script is
// adding its .lua file: it is a member here and preloaded on every data
// connection without an edit to this file.
struct Scripts {
#define DISTLOCK_SCRIPT(name) Script name;
#include "distlock_script_list.inc"
#undef DISTLOCK_SCRIPT
};

// Every script, for the connection handshake's SCRIPT LOAD.
std::vector<const Script*> all_scripts();

// The SCRIPT LOAD command of every script, for a data connection's handshake.
std::vector<std::vector<std::string>> preload_commands();

// Thread-safe; SHA1s are computed on first use.
const Scripts& scripts();

}  // namespace distlock::script
