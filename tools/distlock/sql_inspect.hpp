// status, list and top on a mysql:// or postgresql:// URI: a
// lock there is MySQL/MariaDB's GET_LOCK or PostgreSQL's advisory lock,
// held by a server session (docs/backends.md). force-unlock is the same as
// on ZooKeeper (inspect_commands.cpp).
#pragma once

#include <string>

#include "commands.hpp"

namespace distlock::cli {

// Whether NAME is held, from the server (Lock::is_locked), and which lock of
// the server it is (GET_LOCK's name, the advisory lock's key). The holder,
// its fencing token and any waiters are not shown: the server does not tell
// them to another session. Returns the exit code.
int sql_status(const InspectOptions& o, ClientOptions co);
// `what` (list, top) is refused: these servers cannot list their locks by
// name. Says so and returns kExitUsage.
int sql_no_listing(const ClientOptions& co, const std::string& what);

}  // namespace distlock::cli
