// The blocking runners every primitive shares: whether the calling thread
// may block on the Client, running an acquire step to its end, and one
// script call. Each waits on the calling thread for the I/O thread's answer.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "distlock/value.hpp"
#include "sync/acquire_loop.hpp"
#include "sync/acquire_step.hpp"

namespace distlock::script {
struct Script;
}

namespace distlock::sync {

struct Services;

// What a blocking call on the client's I/O thread says by default.
inline constexpr std::string_view kBlockingOnIoThread =
    "a blocking call on the client's I/O thread would deadlock";

// Whether this thread may wait for the Client: false after close() (ec
// closed, `what` "the client is closed") and on the Client's I/O thread,
// where the wait would wait for itself (ec invalid_argument, `what`
// `on_io_thread`).
bool may_block(const Services& client,
               std::error_code& ec,
               std::string& what,
               std::string_view on_io_thread = kBlockingOnIoThread);

// Runs an AcquireOp of `step` until `deadline` (nullopt: as long as it
// takes) and waits for it; not on the I/O thread (then ec is
// invalid_argument, or closed after close()). Registers nothing with the
// watchdog: the step's undo() decides what an attempt without a reply
// leaves behind, and a caller with a Holding registers it around this.
// `finished`, when given, runs on this thread after the op finished and
// before the step is freed (to read what the step left behind).
AcquireOutcome acquire_step_blocking(Services& client,
                                     std::unique_ptr<AcquireStep> step,
                                     std::optional<Clock::time_point> deadline,
                                     const std::function<void()>& finished = {});

// One script call, blocking, routed by `route_key`. On failure sets ec
// (closed, invalid_argument on the I/O thread, timeout, connection_lost,
// server_error with the server's text in `what`) and returns nil.
Value call_script_blocking(const Services& client,
                           std::string_view route_key,
                           const script::Script& script,
                           std::span<const std::string_view> keys,
                           std::span<const std::string_view> args,
                           std::error_code& ec,
                           std::string& what);

}  // namespace distlock::sync
