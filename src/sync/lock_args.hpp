// The former name of sync/arguments.hpp, still included by the semaphore's
// files; include sync/arguments.hpp instead.
#pragma once

#include "sync/arguments.hpp"
