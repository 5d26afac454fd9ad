// The SQL backends: MySQL/MariaDB's GET_LOCK and PostgreSQL's advisory
// locks, behind the same Lock (docs/backends.md).
//
// - A lock is held by a connection: the server releases a session's locks
//   when the session ends, so the connection is the lease. Each holding, and
//   each acquire while it waits, has a connection of its own from the
//   Client's pool (sql_pool.hpp, at most max_connections).
// - Waiting is the server's: GET_LOCK with a timeout, pg_advisory_lock
//   under lock_timeout; nothing polls. A cancel asks the server to stop the
//   wait (PostgreSQL's cancel request, MySQL's KILL QUERY).
// - A holding is lost (Reason::expired, stop token) the moment its
//   connection is found closed: the driver watches an idle connection's
//   socket, so a KILL, pg_terminate_backend or a server restart is noticed
//   at once; a link that goes silent is found by a trivial query every
//   connection_check_interval.
// - Fencing: a counter row per lock in the table distlock_fence, bumped on
//   the holding's connection right after the acquire, under the lock, so
//   tokens strictly increase per lock.
// - Reentry is counted in this process, per thread.
// - PostgreSQL's shared advisory locks give the read side of a
//   ReadWriteLock; MySQL has no shared lock.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.hpp"
#include "backend/sql_dialect.hpp"

namespace distlock::backend::sql {

std::unique_ptr<Backend> make_sql(const ClientOptions& options,
                                  runtime::Executor& executor,
                                  const std::string& client_id);

// The engine of the read side of PostgreSQL's read-write lock `name` (a
// shared advisory lock on the same key as the write side's exclusive one).
// Throws Error(not_supported) on MySQL.
std::shared_ptr<LockEngine> shared_lock(Backend& backend,
                                        std::shared_ptr<void> client,
                                        std::string name);

}  // namespace distlock::backend::sql
