// The ZooKeeper backend: Curator's InterProcessMutex recipe, node for node.
//
// A lock `name` is the directory <chroot>/<name>. To acquire, a client
// creates the protected ephemeral sequential node
//   <dir>/_c_<uuid>-lock-<10-digit sequence>
// (a new uuid per attempt), lists the directory and holds the lock when its
// node has the lowest sequence. Otherwise it sets a watch on the node just
// before its own (getData with a watch: none is left if that node is gone)
// and lists again when it fires, so each release wakes exactly one waiter.
// Curator's clients on the same directory take part in the same queue.
//
// - The lease is the session: no renewal. The connection dropping makes
//   every holding uncertain (LeaseLostEvent::Reason::suspended, valid()
//   false) until it is back within the session; the session expiring loses
//   them (Reason::expired, stop token). A holder's own node is watched, so a
//   deletion by anyone else (force_unlock, an operator) loses it (taken).
// - The fencing token is the holder's node's czxid: zxids grow with every
//   write to the ensemble, and holders of a name hold in creation order, so
//   tokens strictly increase per name, even across the directory being
//   deleted and made again (a sequence number would restart then).
// - A create whose reply was lost is found again by its uuid (the protected
//   name) once the connection is back: adopted while the acquire still
//   waits, deleted when it gave up, so no orphan node stays in the queue.
// - Reentry is counted in this process, per thread (as Curator does).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.hpp"

namespace distlock::backend::zk {

std::unique_ptr<Backend> make_zookeeper(const ClientOptions& options,
                                        runtime::Executor& executor,
                                        const std::string& client_id);

// The directory of the lock `name` under `chroot`: "<chroot>/<name>" (a
// leading '/' of the name is dropped, so "/a/b" and "a/b" are one lock).
// Throws Error(invalid_argument) for a name that is no valid ZooKeeper path.
std::string lock_directory(const std::string& chroot, const std::string& name);

// The sequence Curator orders a lock node by: what follows its last
// "lock-"; empty for a child that is no lock node.
std::string_view sequence_of(std::string_view child);
// The lock nodes among a directory's `children`, in queue order (the first
// holds); other children are not in the queue.
std::vector<std::string> queue_of(std::vector<std::string> children);

}  // namespace distlock::backend::zk
