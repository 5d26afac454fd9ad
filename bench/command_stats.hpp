// The commands a server counted (INFO commandstats), to tell the round trips
// the clients made from the commands Lua scripts ran inside the server.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace distlock {
class Client;
}

namespace distlock_bench {

// `INFO commandstats` as command name -> calls.
std::map<std::string, std::uint64_t> command_calls(distlock::Client& client);
// after - before, per command (commands absent before count from zero).
std::map<std::string, std::uint64_t> delta(const std::map<std::string, std::uint64_t>& before,
                                           const std::map<std::string, std::uint64_t>& after);

// Round trips the clients made: every command counted by the server except
// those run from inside Lua scripts (`inside_lua`, see lua_called_commands),
// which Redis also counts in commandstats. The INFO calls of the measurement
// itself are not counted.
std::uint64_t client_commands(const std::map<std::string, std::uint64_t>& calls_delta,
                              const std::set<std::string>& inside_lua);
// Names of the commands called through redis.call / redis.pcall in every
// *.lua file of `dir`, lowercased.
std::set<std::string> lua_called_commands(const std::string& dir);
// The text of a file; throws std::runtime_error when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace distlock_bench
