// Unguessable identifiers: client ids from the kernel CSPRNG (getrandom;
// OpenSSL RAND_bytes where it is missing), lease tokens from a per-thread
// ChaCha20 keystream seeded from it (identity.cpp says why that is as safe).
#pragma once

#include <string>

namespace distlock::runtime {

// A random version-4 UUID in canonical text form (36 characters). Throws
// Error(errc::invalid_argument) never; aborts the operation with
// std::runtime_error if the CSPRNG fails, since a guessable owner id would
// let two holders share a lock.
std::string random_uuid();

// 128 random bits as 32 lowercase hex characters, from the calling thread's
// generator: no lock, no system call; reseeded in a forked child. Throws
// std::runtime_error if the CSPRNG fails.
std::string random_token();

// "<client_id>:<thread-number>": the calling thread's owner id for the
// Client `client_id` (the number is per thread, for the process's life).
std::string thread_owner(const std::string& client_id);

}  // namespace distlock::runtime
