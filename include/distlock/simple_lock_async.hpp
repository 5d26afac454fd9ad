/// \file
/// SimpleLock's asynchronous acquire with Asio completion tokens. Including
/// this header brings in Asio; <distlock/simple_lock.hpp> alone does not.
/// SimpleLock's async members are Lock's (<distlock/lock_async.hpp>).
#pragma once

#include "distlock/lock_async.hpp"
#include "distlock/simple_lock.hpp"
