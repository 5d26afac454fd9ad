// One call of a primitive's release script, and the result codes every
// release script answers with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <system_error>

#include "distlock/value.hpp"
#include "net/completion.hpp"
#include "script/script.hpp"
#include "sync/holding.hpp"
#include "topology/topology.hpp"

namespace distlock::sync {

// Result codes of every release script (release.lua's).
enum class ReleaseResult { not_held = -1, decremented = 0, released = 1, mismatch = 2 };

// One release call (the primitive's release script) of `expected` holds of
// `state`, forwarding its outcome to `next`; its arguments live as long as it
// does, and `state` must outlive it.
class ReleaseCall final : public net::Completion {
 public:
  ReleaseCall(const Holding& state, std::uint32_t expected, net::Completion* next);
  // An error when it was not queued (`next` is then not called).
  std::error_code start(topology::Topology& topology);
  void complete(std::error_code ec, Value reply) override;

 private:
  const Holding& state_;
  std::string expected_;
  ReleaseArgs args_;
  std::optional<script::ScriptCall> call_;
  net::Completion* next_;
};

// Reads release.lua's reply; sets ec for an error reply or a reply that is
// not an integer.
ReleaseResult release_result(const Value& reply, std::error_code& ec);

}  // namespace distlock::sync
