// How a Redlock group's majority answers the scripts a RedlockLock sends
// through a topology::Quorum (the Redlock algorithm's counting, in one
// place):
//
//  simple_acquire  held when a majority set the token (the validity check is
//                  the acquire loop's, from when the attempt was sent);
//                  otherwise the token is deleted again on every node (also
//                  those that have not answered: their SET may still land,
//                  and the delete follows it on the same connection) and the
//                  reply is contention, retried after the shortest TTL seen;
//                  a majority of error replies is the first of them.
//  simple_release  1 when a majority deleted the token; -1 when so many nodes
//                  no longer had it that a majority cannot have; otherwise
//                  timeout (too few answers: the release stays pending and is
//                  sent again, as a lost reply of one server is).
//  renew           per holding: 1 when a majority still had it (extended),
//                  0 when a majority no longer had it (taken), -1 when too
//                  few nodes answered to tell (lost now, as expired).
//  force_release   answered by a majority: 1 when any node deleted the key.
// Pure logic over the answers; unit-tested in tests/unit/redlock_rules_test.cpp.
#pragma once

#include <memory>

#include "topology/quorum_rule.hpp"

namespace distlock::topology {
class Quorum;
}

namespace distlock::sync {

std::shared_ptr<const topology::QuorumRule> redlock_acquire_rule();
std::shared_ptr<const topology::QuorumRule> redlock_release_rule();
std::shared_ptr<const topology::QuorumRule> redlock_renew_rule();
std::shared_ptr<const topology::QuorumRule> redlock_force_release_rule();

// Sets the rules above on `quorum` for their scripts.
void install_redlock_rules(topology::Quorum& quorum);

}  // namespace distlock::sync
