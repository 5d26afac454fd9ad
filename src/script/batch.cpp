#include "script/batch.hpp"

#include <array>
#include <vector>

#include "script/scripts.hpp"

namespace distlock::script {
namespace {

constexpr std::string_view kOomShebang = "#!lua flags=allow-oom";

// The dispatcher: slices KEYS and ARGV per operation and pcalls each
// operation's function, so an error fails that operation only (its writes
// before the error stay, as they would in a call of its own).
constexpr std::string_view kDispatch = R"lua(
local n = tonumber(ARGV[1])
local out = {}
local k, a = 1, 2 + 3 * n
for i = 1, n do
  local h = 2 + 3 * (i - 1)
  local keys, args = {}, {}
  for j = 1, tonumber(ARGV[h + 1]) do keys[j] = KEYS[k]; k = k + 1 end
  for j = 1, tonumber(ARGV[h + 2]) do args[j] = ARGV[a]; a = a + 1 end
  local ok, r = pcall(f[tonumber(ARGV[h])], keys, args)
  if ok then
    if r == nil then r = false end
    out[i] = r
  elseif type(r) == 'table' and r.err then
    out[i] = r
  else
    out[i] = {err = 'ERR ' .. tostring(r)}
  end
end
return out
)lua";

struct Entry {
  const Script* script;
  BatchInfo info;
  std::string_view body;
};

// The class of a script from its first line, and its body without it.
BatchInfo classify(const Script& s, std::string_view& body) {
  body = s.source;
  if (s.name == "renew") return {};
  if (!body.starts_with("#!")) return {BatchClass::plain, 0};
  const auto eol = body.find('\n');
  const std::string_view first = body.substr(0, eol);
  if (first != kOomShebang || eol == std::string_view::npos) return {};
  body.remove_prefix(eol + 1);
  return {BatchClass::allow_oom, 0};
}

// Built in place once: the batch Scripts keep views of `sources`.
struct Table {
  Table();
  std::vector<Entry> entries;
  std::array<std::string, 3> sources;
  std::array<Script, 3> batches;
};

Table::Table() {
  std::array<std::vector<std::string_view>, 3> members;
  // The sharded twins batch too, each as a function of its own: one batch
  // may mix both (names of one slot may differ in whether their channel
  // shares it, docs/topologies.md).
  std::vector<const Script*> batched = all_scripts();
  for (const Script* twin : sharded_twins()) batched.push_back(twin);
  for (const Script* s : batched) {
    std::string_view body;
    BatchInfo info = classify(*s, body);
    if (info.cls != BatchClass::none) {
      auto& m = members[static_cast<std::size_t>(info.cls)];
      info.index = static_cast<std::uint16_t>(m.size() + 1);  // Lua counts from 1
      m.push_back(body);
    }
    entries.push_back({s, info, body});
  }
  for (auto cls : {BatchClass::plain, BatchClass::allow_oom}) {
    const auto i = static_cast<std::size_t>(cls);
    sources[i] = batch_source(cls, members[i]);
  }
  batches[1] = make_script("batch", sources[1]);
  batches[2] = make_script("batch_allow_oom", sources[2]);
}

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

std::string batch_source(BatchClass cls, std::span<const std::string_view> members) {
  std::string out;
  if (cls == BatchClass::allow_oom) {
    out += kOomShebang;
    out += '\n';
  }
  out += "-- distlock batch: applies each operation in order (src/script/batch.hpp)\n";
  out += "local f = {}\n";
  for (std::size_t i = 0; i < members.size(); ++i) {
    out += "f[" + std::to_string(i + 1) + "] = function(KEYS, ARGV)\n";
    out += members[i];
    out += "\nend\n";
  }
  out += kDispatch;
  return out;
}

BatchInfo batch_info(const Script& script) noexcept {
  for (const Entry& e : table().entries) {
    if (e.script == &script) return e.info;
  }
  return {};
}

const Script& batch_script(BatchClass cls) {
  return table().batches[static_cast<std::size_t>(cls)];
}

}  // namespace distlock::script
