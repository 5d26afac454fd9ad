/// \file
/// distlock::ReadWriteLock: many readers or one writer (Redisson's
/// RReadWriteLock layout; see docs/read_write_lock.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "distlock/lock.hpp"

namespace distlock {

/// A handle to the read-write lock `name`, made by Client::read_write_lock()
/// or Client::fenced_read_write_lock() (whose write side hands out fencing
/// tokens, strictly increasing per new write holding, from the same counter
/// as fenced_lock(name)). Cheap to copy; copies name the same lock; dropping
/// a handle never releases a hold. No I/O until a member is called.
///
/// It is a SharedTimedMutex: lock / try_lock / try_lock_for / try_lock_until /
/// unlock take and release the write (exclusive) side, lock_shared /
/// try_lock_shared / try_lock_shared_for / try_lock_shared_until /
/// unlock_shared the read (shared) side, so std::unique_lock,
/// std::shared_lock and std::scoped_lock work unchanged. Holds made through
/// these belong to (Client, thread), as Lock's do. read_lock() and
/// write_lock() give each side as a Lock with all of Lock's API, including
/// handle-owned Leases (acquire, try_acquire*, async_acquire) and queries.
///
/// Rules:
///  - Any number of owners read at once while nobody writes; one owner
///    writes while nobody else reads or writes. A reader arriving while
///    others read joins them at once, even when a writer waits (readers'
///    preference, as Redisson).
///  - Both sides are reentrant (a hold count per side).
///  - A thread that holds the write side may take read holds too; after its
///    write unlock it still reads (a downgrade) and waiting readers get in.
///  - A thread holding only read holds that asks for the write side would
///    wait for itself forever (Redisson deadlocks there): lock(), try_lock()
///    and try_lock_for() throw Error(invalid_argument) at once instead, and
///    change nothing (the error_code& forms set it).
///  - Each read hold has its own lease (a timeout key on the server), renewed
///    by the Client's watchdog unless given a fixed lease; a reader that
///    crashes blocks writers only until its lease ends, while live readers
///    keep theirs.
///  - A writer's unlock wakes every waiting reader; the last reader's unlock
///    wakes a waiting writer.
///
/// Errors, waits and leases are as for Lock (lock.hpp): contention is not an
/// error; a negative wait or non-positive lease is invalid_argument, sent
/// nothing; waits of any duration round up to whole milliseconds.
/// unlock() and unlock_shared() never throw; their error_code& forms report
/// not_owner, lease_lost, timeout, connection_lost as Lock::unlock(ec).
///
/// Thread safety: all members may be called from any thread concurrently.
class ReadWriteLock : private Lock {
 public:
  // --- Exclusive (write) side, thread-owned ---------------------------------
  //
  // These are the write side's Lock members (write_lock() gives the same side
  // as a Lock handle).

  /// Blocks until this thread writes, as Lock::lock(): lock() and lock(ec)
  /// with the watchdog lease, lock(lease) and lock(lease, ec) with a fixed
  /// lease and no watchdog.
  using Lock::lock;
  /// A write-side attempt, with the outcomes of Lock::try_lock().
  using Lock::try_lock;
  /// Write-side waits, with the outcomes of Lock::try_lock_for().
  using Lock::try_lock_for;
  /// Write-side waits, with the outcomes of Lock::try_lock_until().
  using Lock::try_lock_until;
  /// Releases one write hold of this thread; never throws.
  using Lock::unlock;

  // --- Shared (read) side, thread-owned -------------------------------------
  ///@{
  /// The read side, as the write side's members above (and std::shared_mutex's
  /// names, so std::shared_lock works): any number of threads of any Clients
  /// read at once while nobody writes.
  void lock_shared() { read_.lock(); }
  void lock_shared(std::error_code& ec) { read_.lock(ec); }
  void lock_shared(std::chrono::milliseconds lease) { read_.lock(lease); }
  void lock_shared(std::chrono::milliseconds lease, std::error_code& ec) { read_.lock(lease, ec); }
  bool try_lock_shared() { return read_.try_lock(); }
  bool try_lock_shared(std::error_code& ec) { return read_.try_lock(ec); }
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& wait) {
    return read_.try_lock_for(wait);
  }
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& wait, std::error_code& ec) {
    return read_.try_lock_for(wait, ec);
  }
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& wait,
                           std::chrono::milliseconds lease) {
    return read_.try_lock_for(wait, lease);
  }
  template <class Rep, class Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& wait,
                           std::optional<std::chrono::milliseconds> lease,
                           std::error_code& ec) {
    return read_.try_lock_for(wait, lease, ec);
  }
  template <class Clock, class Duration>
  bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return read_.try_lock_until(deadline);
  }
  template <class Clock, class Duration>
  bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& deadline,
                             std::error_code& ec) {
    return read_.try_lock_until(deadline, ec);
  }
  ///@}
  ///@{
  /// Releases one read hold of this thread; never throws.
  void unlock_shared() noexcept { read_.unlock(); }
  void unlock_shared(std::error_code& ec) noexcept { read_.unlock(ec); }
  ///@}

  // --- Each side as a Lock (Redisson's readLock() / writeLock()) ------------
  ///@{
  /// Each side as a Lock (Redisson's readLock() / writeLock()).
  ///
  /// Thread-owned holds through either are the same holds as above. Their
  /// queries read the server: read_lock().is_locked() is true while anyone
  /// reads, write_lock().is_locked() while anyone writes; hold_count() is
  /// this thread's count of that side. force_unlock() on either side deletes
  /// the whole read-write lock (both sides) and wakes every waiter.
  Lock read_lock() const { return read_; }
  Lock write_lock() const { return *this; }
  ///@}

  /// This thread's write side fencing token while it writes (fenced handles).
  using Lock::fencing_token;
  /// The name it was made with.
  using Lock::name;
  /// True when made by Client::fenced_read_write_lock().
  using Lock::fenced;

 private:
  friend class Client;  // Client::read_write_lock() / fenced_read_write_lock()

  // Throws Error(invalid_argument) for an empty name or one over 64 KiB.
  ReadWriteLock(std::shared_ptr<sync::Services> client,
                std::string name,
                bool fenced,
                std::chrono::milliseconds lock_delay = std::chrono::milliseconds(0));
  // Another backend's sides (PostgreSQL: exclusive and shared advisory locks).
  ReadWriteLock(Lock write, Lock read) : Lock(std::move(write)), read_(std::move(read)) {}

  Lock read_;  // the read side; the write side is the Lock this class is
};

}  // namespace distlock
