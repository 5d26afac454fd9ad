// What a Redis Cluster node's reply to a routed command says about where the
// command should go: a redirection (MOVED, ASK), a transient refusal
// (TRYAGAIN, CLUSTERDOWN, LOADING, MASTERDOWN), another error, or a reply that
// is not an error at all. Pure: no I/O, no clock, no state.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "distlock/value.hpp"

namespace distlock::topology {

// One reply, classified. Every refusal (a redirection or a transient one)
// means the server did not run the command, so sending it again cannot run
// it twice.
struct ClusterRedirect {
  enum class Kind {
    not_error,     // any reply that is not an error reply
    moved,         // "MOVED <slot> <host>:<port>": the slot lives there now
    ask,           // "ASK <slot> <host>:<port>": this one command only, after ASKING
    try_again,     // "TRYAGAIN ...": a multi-key command during a slot migration
    cluster_down,  // "CLUSTERDOWN ...": a slot without a master, or no quorum
    loading,       // "LOADING ...": the node is loading its data set
    master_down,   // "MASTERDOWN ...": a replica cut off from its master
    other_error,   // any other error reply, a malformed MOVED or ASK included
  };

  Kind kind = Kind::not_error;
  // MOVED and ASK only: the slot and the address that serves it now.
  std::uint16_t slot = 0;
  std::string host;
  std::uint16_t port = 0;

  // MOVED or ASK: send the command to host:port.
  bool redirection() const noexcept { return kind == Kind::moved || kind == Kind::ask; }
  // TRYAGAIN, CLUSTERDOWN, LOADING or MASTERDOWN: the same command may
  // succeed on the same slot's node shortly.
  bool transient() const noexcept {
    return kind == Kind::try_again || kind == Kind::cluster_down || kind == Kind::loading ||
           kind == Kind::master_down;
  }

  // Classifies `reply`. A refusal code counts only as the whole first word
  // and in upper case ("TRYAGAIN" or "TRYAGAIN <text>", not "TRYAGAINX").
  // MOVED and ASK need a slot in [0, 16384), one space, and an address whose
  // last ':' separates a non-empty host from a port in [1, 65535]; anything
  // else after those words is other_error, handed to the caller as it is.
  // So an empty host (Redis 7's "MOVED 3999 :6381" for an unknown endpoint)
  // is other_error, while "?" (its hostname placeholder) is taken as a host.
  // The host is taken as written: an IPv6 address comes as Redis sends it
  // ("::1" from "::1:6381"; brackets, if any, are kept).
  static ClusterRedirect classify(const Value& reply);
};

// MOVED/ASK redirections of one command after which the next is handed to
// the caller (a redirect loop). Transient refusals do not count: they are
// bounded by the command timeout (cluster_retry_delay), so a call that waited
// out a migration's TRYAGAINs can still follow the ASK that ends it.
inline constexpr unsigned kMaxClusterRedirects = 5;

// The wait before resending a command refused transiently, after `waited`
// (the delays so far): 10 ms, then doubling (waited + 10 ms: 10, 20, 40, 80,
// 160) to at most 200 ms. nullopt once `waited` plus that wait would pass
// `limit` (the command timeout): the refusal is then handed to the caller.
std::optional<std::chrono::milliseconds> cluster_retry_delay(std::chrono::milliseconds waited,
                                                             std::chrono::milliseconds limit);

}  // namespace distlock::topology
