/// \file
/// Umbrella header: all of distlock's public API, including the async parts
/// (which bring in Asio).
#pragma once

#include "distlock/client.hpp"
#include "distlock/client_async.hpp"
#include "distlock/client_options.hpp"
#include "distlock/error.hpp"
#include "distlock/fair_lock.hpp"
#include "distlock/fencing.hpp"
#include "distlock/lease.hpp"
#include "distlock/lock.hpp"
#include "distlock/lock_async.hpp"
#include "distlock/lock_options.hpp"
#include "distlock/multi_lock.hpp"
#include "distlock/multi_lock_async.hpp"
#include "distlock/read_write_lock.hpp"
#include "distlock/semaphore.hpp"
#include "distlock/simple_lock.hpp"
#include "distlock/simple_lock_async.hpp"
#include "distlock/value.hpp"
// The synchronizers
#include "distlock/latch.hpp"
#include "distlock/rate_limiter.hpp"
// The synchronizers' async forms
#include "distlock/latch_async.hpp"
#include "distlock/rate_limiter_async.hpp"
#include "distlock/semaphore_async.hpp"
// Redlock over independent masters
#include "distlock/redlock.hpp"
// Metrics
#include "distlock/metrics.hpp"
#include "distlock/metrics_server.hpp"
