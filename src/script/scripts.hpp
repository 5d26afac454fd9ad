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

// Sharded pub/sub (ClientOptions::sharded_pubsub): the twin of `script`, one
// of scripts(), whose source is the script's with every
// redis.call('publish', ...) made redis.call('spublish', ...), under its own
// SHA1 and name ("<name>_sharded"). The script itself when it publishes
// nothing, or is not one of scripts(). Keys and arguments are unchanged, so
// a caller swaps the script and nothing else. Thread-safe.
const Script& sharded_twin(const Script& script);

// The twins that differ from their scripts, in scripts() order.
std::vector<const Script*> sharded_twins();

}  // namespace distlock::script
