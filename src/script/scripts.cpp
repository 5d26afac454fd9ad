#include "script/scripts.hpp"

#include <string_view>

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

namespace {

constexpr std::string_view kPublish = "redis.call('publish',";
constexpr std::string_view kSpublish = "redis.call('spublish',";

// Built once: the twins keep views of `sources` and `names`, so neither
// vector may grow after the Scripts are made.
struct Twins {
  Twins() {
    const std::vector<const Script*> all = all_scripts();
    sources.reserve(all.size());
    names.reserve(all.size());
    for (const Script* s : all) {
      if (s->source.find(kPublish) == std::string_view::npos) continue;
      std::string text(s->source);
      for (auto at = text.find(kPublish); at != std::string::npos;
           at = text.find(kPublish, at + kSpublish.size())) {
        text.replace(at, kPublish.size(), kSpublish);
      }
      sources.push_back(std::move(text));
      names.push_back(std::string(s->name) + "_sharded");
      originals.push_back(s);
    }
    for (std::size_t i = 0; i < sources.size(); ++i) {
      twins.push_back(make_script(names[i], sources[i]));
    }
  }
  std::vector<std::string> sources;
  std::vector<std::string> names;
  std::vector<const Script*> originals;
  std::vector<Script> twins;  // twins[i] is originals[i]'s
};

const Twins& twins() {
  static const Twins t;
  return t;
}

}  // namespace

const Script& sharded_twin(const Script& script) {
  const Twins& t = twins();
  for (std::size_t i = 0; i < t.originals.size(); ++i) {
    if (t.originals[i] == &script) return t.twins[i];
  }
  return script;
}

std::vector<const Script*> sharded_twins() {
  std::vector<const Script*> out;
  for (const Script& s : twins().twins) out.push_back(&s);
  return out;
}

std::vector<std::vector<std::string>> preload_commands() {
  std::vector<std::vector<std::string>> commands;
  for (const Script* s : all_scripts()) {
    commands.push_back({"SCRIPT", "LOAD", std::string(s->source)});
  }
  return commands;
}

}  // namespace distlock::script
