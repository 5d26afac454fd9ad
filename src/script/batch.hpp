// Batch scripts (coalescing, docs/architecture.md): one script per class of
// scripts that wraps each member's source as a function and applies several
// operations in one EVALSHA, each under pcall, answering each separately.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "script/script.hpp"

namespace distlock::script {

// Scripts are batched only with scripts of the same class, since a script's
// flags are the whole call's: allow_oom scripts (the releases, which only
// free memory) must run at maxmemory, and the others must not.
enum class BatchClass : std::uint8_t {
  none,       // never batched: renew.lua (itself a batch), unknown flags
  plain,      // no shebang line
  allow_oom,  // "#!lua flags=allow-oom"
};

struct BatchInfo {
  BatchClass cls = BatchClass::none;
  std::uint16_t index = 0;  // the script's function in its class's batch
};

// How `script` (one of scripts() or a sharded_twin) batches; {none} for any
// other script.
BatchInfo batch_info(const Script& script) noexcept;

// The batch script of `cls` (plain or allow_oom). It takes
//   ARGV[1] = n, then n triples (function index, key count, argument count),
//   then every operation's arguments in order; KEYS = every operation's keys
//   in order;
// and answers an array of n replies: each operation's own reply (nil as a
// null), or an error reply when its script raised one (a Lua error or a
// failed redis.call), which fails that operation only.
const Script& batch_script(BatchClass cls);

// The batch script's source for `members` (exposed for the unit test): the
// class's shebang line, then each member's body (its own shebang line
// removed) as function i of a table, then the dispatcher.
std::string batch_source(BatchClass cls, std::span<const std::string_view> members);

}  // namespace distlock::script
