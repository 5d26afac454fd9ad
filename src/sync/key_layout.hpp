// Where every primitive keeps its state: the names of the keys and channels
// derived from a primitive's name. The primitives, Redlock and the
// command-line tool (`distlock status` / `list`) all ask here, so a layout is
// written once. The strings are Redisson's where Redisson has the primitive
// (RLock, RFairLock, RReadWriteLock, RSemaphore, RCountDownLatch): both sides
// must find each other's keys and hear each other's channels, so none of them
// may change.
//
// Each primitive's main key is its name itself (the lock hash, the simple
// lock's string, the semaphore's and latch's counters, the rate limiter's
// hash); the functions below give the others. They do not validate the name.
//
// Most derived names follow Redisson's prefixName rule: "<prefix>:{name}",
// or "<prefix>:name" when the name contains a '{' (so a name with a hash tag
// of its own, "{tenant}:job", keeps it). The keys a primitive's scripts touch
// together must share the name's cluster slot; where that rule would move a
// key to another slot (a name like "a}b" or "x{y") fencing_counter_key and
// the fair lock's keys pick another key that does not, as documented below.
// Channels need no slot: Pub/Sub reaches every node.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace distlock::sync {

// The fencing counter of a fenced lock (Lock, fair, simple, and the write
// side of a read-write lock): "redisson_lock_token:{name}" as Redisson's
// fenced lock whenever that shares `name`'s slot; otherwise
// "redisson_lock_token:{tag}:name" with the name's own hash tag, or with the
// smallest decimal number whose slot is `name`'s. Always `name`'s slot.
std::string fencing_counter_key(std::string_view name);

// The channel a Lock's (and a fair lock's) unlocks are published on:
// "redisson_lock__channel:{name}" (prefixName rule). A fair waiter's own
// channel is this plus ":<owner>".
std::string lock_channel(std::string_view name);

// The fair lock's queue (a list of waiting owners) and its timeout zset
// (owner -> liveness deadline): "redisson_lock_queue:{name}" and
// "redisson_lock_timeout:{name}" (prefixName rule) when that shares `name`'s
// slot; otherwise "<prefix>:" + fencing_counter_key(name). Always `name`'s
// slot.
std::string fair_queue_key(std::string_view name);
std::string fair_timeout_key(std::string_view name);

// The read-write lock (Redisson's suffixName rule): the prefix of its timeout
// keys, "{name}", or the name itself when it contains a '{'; the prefix of
// one owner's read-hold timeout keys, "<rw_key_prefix>:<owner>:rwlock_timeout"
// (the scripts append ":<n>" per hold); the channel both sides publish
// unlocks on, "redisson_rwlock:{name}" (prefixName rule).
std::string rw_key_prefix(std::string_view name);
std::string rw_timeout_prefix(std::string_view name, std::string_view owner);
std::string rw_channel(std::string_view name);

// The semaphore (docs/semaphore.md, Layout): the zset holder -> lease
// deadline "distlock_sem_holders:{name}", the hash holder -> permits for
// holders of other than 1 "distlock_sem_counts:{name}", and the channel
// releases publish on, Redisson's "redisson_sc:{name}"; the earlier layout's
// zset "distlock_semaphore_leases:{name}" and hash
// "distlock_semaphore_holders:{name}" (every holder's count), whose expired
// holders the scripts still reclaim (all prefixName rule).
std::string semaphore_holders_key(std::string_view name);
std::string semaphore_counts_key(std::string_view name);
std::string semaphore_v1_leases_key(std::string_view name);
std::string semaphore_v1_holders_key(std::string_view name);
std::string semaphore_channel(std::string_view name);

// The count-down latch's channel: "redisson_countdownlatch__channel:{name}"
// (prefixName rule).
std::string latch_channel(std::string_view name);

// The simple lock's (and Redlock's) unlock channel:
// "distlock_simple_lock__channel:{name}" (prefixName rule).
std::string simple_lock_channel(std::string_view name);

// The lock-delay marker of a lock of any kind (docs/lock.md, Lock-delay):
// "distlock_lock_delay:{name}" when that shares `name`'s slot (prefixName
// rule), otherwise as the fair lock's keys. Always `name`'s slot.
std::string lock_delay_key(std::string_view name);

// A lock handle's lock-delay (LockOptions::lock_delay, checked): with one,
// its marker key and the delay in ms as script text; without (0), both
// empty, and the handle neither reads nor writes a marker: its scripts get
// the KEYS and ARGV they had before lock-delay existed.
struct LockDelay {
  LockDelay(std::string_view name, std::chrono::milliseconds delay);
  bool on() const noexcept { return !key.empty(); }
  std::string key;
  std::string text;
};

// True for a key that belongs to a primitive named by another key: a fair
// lock's queue or timeout, a fencing counter, a semaphore's leases or
// holders, a read hold's timeout key, a lock-delay marker. `distlock list` skips these.
bool is_auxiliary_key(std::string_view key);

}  // namespace distlock::sync
