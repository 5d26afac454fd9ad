/// \file
/// The fair lock: Client::fair_lock(name) and Client::fenced_fair_lock(name)
/// (declared in client.hpp) return a Lock with every member of Lock's API
/// (lock.hpp): thread-owned reentrant holds, Leases, the async forms. What
/// differs is who gets it next:
///
/// - FIFO across processes. A waiter that finds it held is queued on the
///   server; a freed lock is handed to the first live waiter in arrival
///   order, never to a newcomer. try_lock() too fails while others wait.
/// - Handoff by grant. Unlocking grants the lock to the queue head on the
///   server and publishes the grant on that waiter's own channel: a waiter
///   with the watchdog lease holds it as the message arrives, without another
///   round trip; one with a fixed lease makes one attempt that sets its lease.
/// - Liveness by the server's clock. A waiter's place lasts one liveness
///   lease (its Client's ClientOptions::watchdog_timeout) counted with the
///   server's TIME, and its Client's watchdog renews it while the waiter
///   waits. A waiter whose process dies is skipped within one such lease; a
///   grant made to it lapses with its place and passes on. A waiter that
///   gives up (deadline, cancellation) leaves the queue at once, and gives
///   back a grant that raced its giving up.
/// - A lease that ran out while held (a fixed lease, or a lost watchdog
///   lease) makes unlock(ec) report lease_lost and leaves the next holder
///   alone (Redisson reports success there).
///
/// Errors: as Lock's. The factories do no I/O and throw
/// Error(invalid_argument) for an empty name or one over 64 KiB.
/// Layout on the server, and the Redisson differences: docs/fair_lock.md.
#pragma once

#include "distlock/client.hpp"
#include "distlock/lock.hpp"
