#include "command_stats.hpp"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "distlock/client.hpp"

namespace distlock_bench {

std::map<std::string, std::uint64_t> command_calls(distlock::Client& client) {
  const distlock::Value reply = client.command("INFO", "commandstats");
  std::map<std::string, std::uint64_t> out;
  std::stringstream in(reply.as_string());
  std::string line;
  // cmdstat_evalsha:calls=12,usec=...
  while (std::getline(in, line)) {
    const std::string prefix = "cmdstat_";
    if (line.rfind(prefix, 0) != 0) continue;
    const auto colon = line.find(':');
    const auto calls = line.find("calls=", colon);
    if (colon == std::string::npos || calls == std::string::npos) continue;
    out[line.substr(prefix.size(), colon - prefix.size())] = std::stoull(line.substr(calls + 6));
  }
  return out;
}

std::map<std::string, std::uint64_t> delta(const std::map<std::string, std::uint64_t>& before,
                                           const std::map<std::string, std::uint64_t>& after) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [name, calls] : after) {
    const auto it = before.find(name);
    const std::uint64_t base = it == before.end() ? 0 : it->second;
    if (calls > base) out[name] = calls - base;
  }
  return out;
}

std::uint64_t client_commands(const std::map<std::string, std::uint64_t>& calls_delta,
                              const std::set<std::string>& inside_lua) {
  std::uint64_t n = 0;
  for (const auto& [name, calls] : calls_delta) {
    if (name == "info" || inside_lua.count(name) != 0) continue;
    n += calls;
  }
  return n;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> lua_called_commands(const std::string& dir) {
  std::set<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) throw std::runtime_error("cannot open Lua directory " + dir);
  static const std::regex call(R"(redis\.p?call\(\s*['"]([A-Za-z]+)['"])");
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 5 || name.substr(name.size() - 4) != ".lua") continue;
    const std::string text = read_file(dir + "/" + name);
    for (std::sregex_iterator it(text.begin(), text.end(), call), end; it != end; ++it) {
      std::string cmd = (*it)[1].str();
      std::transform(cmd.begin(), cmd.end(), cmd.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      out.insert(cmd);
    }
  }
  closedir(d);
  return out;
}

}  // namespace distlock_bench
