#include "script/scripts.hpp"

#include "distlock_lua_sources.hpp"

namespace distlock::script {

const Scripts& scripts() {
  static const Scripts all{
#define DISTLOCK_SCRIPT(name) make_script(#name, lua::name),
#include "distlock_script_list.inc"
#undef DISTLOCK_SCRIPT
  };
  return all;
}

std::vector<const Script*> all_scripts() {
  const Scripts& s = scripts();
  return {
#define DISTLOCK_SCRIPT(name) &s.name,
#include "distlock_script_list.inc"
#undef DISTLOCK_SCRIPT
  };
}

std::vector<std::vector<std::string>> preload_commands() {
  std::vector<std::vector<std::string>> commands;
  for (const Script* s : all_scripts()) {
    commands.push_back({"SCRIPT", "LOAD", std::string(s->source)});
  }
  return commands;
}

}  // namespace distlock::script
